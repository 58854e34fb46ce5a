package io.kvpager.impl.coordinator;

import io.kvpager.protocol.PoolRanks;
import io.kvpager.protocol.RankTarget;
import io.kvpager.FailureCode;
import io.kvpager.MissReason;
import io.kvpager.cache.KvPagerException;
import io.kvpager.core.PageMapFailure;
import io.kvpager.Geometry;
import io.kvpager.Layout;
import io.kvpager.protocol.CreateTensorsRequest;
import io.kvpager.protocol.DestroyTensorsRequest;
import io.kvpager.protocol.Owner;
import io.kvpager.protocol.TensorsCreatedRequest;
import io.kvpager.protocol.WorkerAction;
import io.vertx.core.Context;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.Vertx;
import io.vertx.core.json.JsonObject;
import io.vertx.junit5.VertxExtension;
import io.vertx.junit5.VertxTestContext;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.function.Supplier;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** The fan-out's all-or-nothing rule against scripted ranks: compensation, quarantine, timeouts, missing ranks. */
@ExtendWith(VertxExtension.class)
class FanOutMapperTest {

    private static final long TIMEOUT_MS = 200;
    /**
     * The send timeout where the test times the answer: long enough that a loaded machine's
     * stalls stay within the 20 % slack allowed.
     */
    private static final long TIMED_MS = 2_000;

    /** A pool of 4 ranks with its mapper, run on one context as the coordinator runs it. */
    private record Pool(Context context, RankFanOut fanOut, RankRejoin rejoin, FanOutMapper mapper, List<ScriptedRank> ranks) {
        ScriptedRank rank(int tp) {
            return ranks.get(tp);
        }

        <T> Future<T> on(Supplier<Future<T>> work) {
            Promise<T> promise = Promise.promise();
            context.runOnContext(v -> work.get().onComplete(promise));
            return promise.future();
        }

        Future<Void> map(int... pages) {
            return on(() -> Future.fromCompletionStage(mapper.map(pages)));
        }

        Future<Void> unmap(int... pages) {
            return on(() -> Future.fromCompletionStage(mapper.unmap(pages)));
        }
    }

    private static Future<Pool> pool(Vertx vertx, String instance, List<Integer> stages, int tp, int group) {
        return pool(vertx, instance, stages, tp, group, TIMEOUT_MS);
    }

    private static Future<Pool> pool(Vertx vertx, String instance, List<Integer> stages, int tp, int group, long timeoutMs) {
        PoolRanks ranks = new PoolRanks(instance, stages, tp, group);
        return ScriptedRank.startAll(vertx, ranks).map(scripted -> {
            RankFanOut fanOut = new RankFanOut(vertx.eventBus(), ranks, timeoutMs);
            CreateTensorsRequest tensors = new CreateTensorsRequest(group, fanOut.owner(),
                    new Geometry(2, 2, 4096, 2L << 20, 16, Layout.PAGE_MAJOR), false, null);
            // the pool's mapped pages, as its ledger would give them: those of its first rank
            RankRejoin rejoin = new RankRejoin(vertx, fanOut, tensors, 1_000, 10, () -> scripted.getFirst().mappedNow());
            return new Pool(vertx.getOrCreateContext(), fanOut, rejoin, new FanOutMapper(fanOut, rejoin), scripted);
        });
    }

    private static Future<Pool> pool(Vertx vertx, String instance) {
        return pool(vertx, instance, List.of(0), 4, 7);
    }

    private static PageMapFailure mapFailure(Throwable e) {
        assertThat(e).isInstanceOf(PageMapFailure.class);
        assertThat(e.getCause()).isInstanceOf(KvPagerException.class);
        return (PageMapFailure) e;
    }

    @Test
    void mapsOnEveryRankWithThePoolsGroupAndAFreshRequestIdPerBatch(Vertx vertx, VertxTestContext test) {
        pool(vertx, "fan-ok").compose(p -> p.map(3, 4).compose(v -> p.map(5)).map(v -> {
            Set<String> firstIds = new HashSet<>();
            Set<String> secondIds = new HashSet<>();
            for (ScriptedRank r : p.ranks()) {
                assertThat(r.mapped).containsExactly(3, 4, 5);
                List<JsonObject> maps = r.received("map");
                assertThat(maps).hasSize(2);
                assertThat(maps.getFirst().getInteger("group")).isEqualTo(7);
                firstIds.add(maps.getFirst().getString("requestId"));
                secondIds.add(maps.get(1).getString("requestId"));
            }
            // one batch is one request, the same on every rank; the next batch is another
            assertThat(firstIds).hasSize(1);
            assertThat(secondIds).hasSize(1).doesNotContainAnyElementsOf(firstIds);
            return v;
        })).onComplete(test.succeedingThenComplete());
    }

    @Test
    void outOfMemoryOnOneRankIsUndoneOnTheOthers(Vertx vertx, VertxTestContext test) {
        pool(vertx, "fan-oom").compose(p -> {
            p.rank(2).script("map", new ScriptedRank.Fail(507, "page 3: cuMemCreate failed: CUDA_ERROR_OUT_OF_MEMORY"));
            return p.map(3, 4).transform(ar -> {
                PageMapFailure failure = mapFailure(ar.cause());
                assertThat(failure.reason()).isEqualTo(MissReason.OUT_OF_MEMORY);
                assertThat(failure.quarantined()).isEmpty();
                KvPagerException cause = (KvPagerException) failure.getCause();
                assertThat(cause.code()).isEqualTo(FailureCode.OUT_OF_MEMORY);
                assertThat(cause.failures()).singleElement().satisfies(f -> {
                    assertThat(f.rank()).isEqualTo("pp0/tp2");
                    assertThat(f.code()).isEqualTo(FailureCode.OUT_OF_MEMORY);
                    assertThat(f.message()).contains("group 7", "page 3", "CUDA_ERROR_OUT_OF_MEMORY");
                });
                assertThat(failure.getMessage()).contains("1 of 4 ranks", "pp0/tp2", "CUDA_ERROR_OUT_OF_MEMORY",
                        "unmap again on pp0/tp0, pp0/tp1, pp0/tp3");
                for (ScriptedRank r : p.ranks()) {
                    assertThat(r.mapped).as(r.rank.name()).isEmpty();
                }
                assertThat(p.rank(2).received("unmap")).isEmpty();
                return Future.succeededFuture();
            });
        }).onComplete(test.succeedingThenComplete());
    }

    @Test
    void everyFailingRankIsListedAndOutOfMemoryWins(Vertx vertx, VertxTestContext test) {
        pool(vertx, "fan-two").compose(p -> {
            p.rank(1).script("map", new ScriptedRank.Fail(500, "page 3: cuMemMap failed: CUDA_ERROR_INVALID_VALUE"));
            p.rank(3).script("map", new ScriptedRank.Fail(507, "page 3: cuMemCreate failed: CUDA_ERROR_OUT_OF_MEMORY"));
            return p.map(3).transform(ar -> {
                KvPagerException cause = (KvPagerException) mapFailure(ar.cause()).getCause();
                assertThat(cause.code()).isEqualTo(FailureCode.OUT_OF_MEMORY);
                assertThat(cause.failures()).extracting(f -> f.rank() + " " + f.code())
                        .containsExactly("pp0/tp1 DRIVER_ERROR", "pp0/tp3 OUT_OF_MEMORY");
                assertThat(p.rank(0).mapped).isEmpty();
                assertThat(p.rank(2).mapped).isEmpty();
                return Future.succeededFuture();
            });
        }).onComplete(test.succeedingThenComplete());
    }

    @Test
    void aDriverErrorIsAMapFailedMiss(Vertx vertx, VertxTestContext test) {
        pool(vertx, "fan-500").compose(p -> {
            p.rank(0).script("map", new ScriptedRank.Fail(500, "page 3: cuMemMap failed: CUDA_ERROR_UNKNOWN"));
            return p.map(3).transform(ar -> {
                assertThat(mapFailure(ar.cause()).reason()).isEqualTo(MissReason.MAP_FAILED);
                return Future.succeededFuture();
            });
        }).onComplete(test.succeedingThenComplete());
    }

    @Test
    void aRankThatTimesOutIsAnsweredOnceTheSendTimeoutHasPassedWithTheBatchQuarantined(Vertx vertx, VertxTestContext test) {
        pool(vertx, "fan-late", List.of(0), 4, 7, TIMED_MS).compose(p -> {
            p.rank(1).script("map", new ScriptedRank.Silent(true));
            long began = System.nanoTime();
            return p.map(5).transform(ar -> {
                long tookMs = (System.nanoTime() - began) / 1_000_000;
                PageMapFailure failure = mapFailure(ar.cause());
                KvPagerException cause = (KvPagerException) failure.getCause();
                assertThat(cause.code()).isEqualTo(FailureCode.TIMEOUT);
                assertThat(cause.failureOf("pp0/tp1").message()).contains("pp0/tp1 did not answer map within " + TIMED_MS + " ms",
                        "Timed out after waiting " + TIMED_MS);
                assertThat(tookMs).as("answered within 1.2x the send timeout").isBetween(TIMED_MS, TIMED_MS * 6 / 5);
                // nobody waited for a compensation: the batch is quarantined, for the sweep to release
                assertThat(failure.quarantined()).containsExactly(5);
                assertThat(failure.getMessage()).contains("page 5 quarantined: what pp0/tp1 holds of it is unknown until it answers");
                for (ScriptedRank r : p.ranks()) {
                    assertThat(r.received("unmap")).as(r.rank.name()).isEmpty();
                }
                return Future.succeededFuture();
            });
        }).onComplete(test.succeedingThenComplete());
    }

    @Test
    void aRequestDroppedUnhandledIsStoppingWithTheBusesOwnTextNotATimeout(Vertx vertx, VertxTestContext test) {
        pool(vertx, "fan-dropped").compose(p -> {
            // what a worker being undeployed does with the requests still queued for it
            p.rank(2).script("map", new ScriptedRank.Dropped());
            return p.map(4).transform(ar -> {
                PageMapFailure failure = mapFailure(ar.cause());
                KvPagerException cause = (KvPagerException) failure.getCause();
                assertThat(cause.failureOf("pp0/tp2").code()).isEqualTo(FailureCode.STOPPING);
                assertThat(cause.failureOf("pp0/tp2").message()).contains("pp0/tp2 dropped map unhandled", "its worker stopping",
                        "Discarded the request");
                assertThat(failure.reason()).isEqualTo(MissReason.RANK_DOWN);
                assertThat(failure.quarantined()).isEmpty();
                assertThat(failure.getMessage()).doesNotContain("TIMEOUT").contains("unmap again on pp0/tp0, pp0/tp1, pp0/tp3");
                for (ScriptedRank r : p.ranks()) {
                    assertThat(r.mapped).as(r.rank.name()).isEmpty();
                }
                assertThat(p.rejoin().lost()).extracting(RankTarget::name).containsExactly("pp0/tp2");
                return Future.succeededFuture();
            });
        }).onComplete(test.succeedingThenComplete());
    }

    @Test
    void aFailedCompensationQuarantinesTheBatch(Vertx vertx, VertxTestContext test) {
        pool(vertx, "fan-stuck").compose(p -> {
            p.rank(2).script("map", new ScriptedRank.Fail(500, "page 6: cuMemMap failed: CUDA_ERROR_UNKNOWN"));
            p.rank(0).script("unmap", new ScriptedRank.Fail(500, "page 6: cuMemUnmap failed: CUDA_ERROR_UNKNOWN"));
            return p.map(6, 7).transform(ar -> {
                PageMapFailure failure = mapFailure(ar.cause());
                assertThat(failure.quarantined()).containsExactly(6, 7);
                assertThat(failure.getMessage()).contains("compensation: unmap again on pp0/tp1, pp0/tp3; failed on pp0/tp0",
                        "cuMemUnmap failed", "pages [6, 7] quarantined");
                assertThat(p.rank(0).mapped).containsExactly(6, 7);
                assertThat(p.rank(1).mapped).isEmpty();
                return Future.succeededFuture();
            });
        }).onComplete(test.succeedingThenComplete());
    }

    @Test
    void aRankThatCouldNotRollBackQuarantinesTheBatch(Vertx vertx, VertxTestContext test) {
        pool(vertx, "fan-partial").compose(p -> {
            p.rank(1).script("map", new ScriptedRank.Fail(500, "page 4: cuMemMap failed: CUDA_ERROR_UNKNOWN; "
                    + "rollback incomplete (cuMemUnmap failed: CUDA_ERROR_UNKNOWN)", false, List.of(4)));
            return p.map(3, 4).transform(ar -> {
                PageMapFailure failure = mapFailure(ar.cause());
                assertThat(failure.quarantined()).containsExactly(3, 4);
                assertThat(failure.getMessage()).contains("unmap again on pp0/tp0, pp0/tp2, pp0/tp3",
                        "pp0/tp1 could not undo its part: pages [3, 4] quarantined");
                assertThat(p.rank(0).mapped).isEmpty();
                return Future.succeededFuture();
            });
        }).onComplete(test.succeedingThenComplete());
    }

    /** Quarantine follows the failure's rollbackComplete field, whatever its text says. */
    @Test
    void theQuarantineDecisionReadsTheFieldsNotTheText(Vertx vertx, VertxTestContext test) {
        pool(vertx, "fan-fields").compose(p -> {
            // reworded: nothing in the text says the rollback failed, the field does
            p.rank(1).script("map", new ScriptedRank.Fail(500, "page 4: cuMemMap failed: CUDA_ERROR_UNKNOWN; "
                    + "undo left page 4 behind", false, List.of(4)));
            return p.map(3, 4).transform(first -> {
                assertThat(mapFailure(first.cause()).quarantined()).containsExactly(3, 4);
                // the old words, with a rollback that was complete: nothing to quarantine
                p.rank(2).script("map", new ScriptedRank.Fail(500, "page 9: cuMemMap failed: CUDA_ERROR_UNKNOWN; "
                        + "rollback incomplete (made up)"));
                return p.map(8, 9);
            }).transform(second -> {
                PageMapFailure failure = mapFailure(second.cause());
                assertThat(failure.quarantined()).isEmpty();
                assertThat(failure.getMessage()).contains("rollback incomplete (made up)").doesNotContain("quarantined");
                for (ScriptedRank r : p.ranks()) {
                    assertThat(r.mapped).as(r.rank.name()).doesNotContain(8, 9);
                }
                return Future.succeededFuture();
            });
        }).onComplete(test.succeedingThenComplete());
    }

    @Test
    void aFailedUnmapIsMappedAgainWhereItWorked(Vertx vertx, VertxTestContext test) {
        pool(vertx, "fan-unmap").compose(p -> p.map(1, 2).compose(v -> {
            p.rank(3).script("unmap", new ScriptedRank.Fail(500, "page 1: cuMemUnmap failed: CUDA_ERROR_UNKNOWN"));
            return p.unmap(1, 2).transform(ar -> {
                PageMapFailure failure = mapFailure(ar.cause());
                assertThat(failure.quarantined()).isEmpty();
                assertThat(failure.getMessage()).contains("unmap of pages [1, 2] in group 7", "map again on pp0/tp0, pp0/tp1, pp0/tp2");
                for (ScriptedRank r : p.ranks()) {
                    assertThat(r.mapped).as(r.rank.name()).containsExactly(1, 2);
                }
                return p.unmap(1, 2);
            });
        })).onComplete(test.succeedingThenComplete());
    }

    @Test
    void aMissingRankFailsAtOnceAndRejoinsOnceItIsBack(Vertx vertx, VertxTestContext test) {
        pool(vertx, "fan-gone").compose(p -> p.rank(3).stop().compose(stopped -> p.map(2).transform(ar -> {
            PageMapFailure failure = mapFailure(ar.cause());
            assertThat(failure.reason()).isEqualTo(MissReason.RANK_DOWN);
            KvPagerException cause = (KvPagerException) failure.getCause();
            assertThat(cause.code()).isEqualTo(FailureCode.NO_RANK);
            assertThat(cause.failureOf("pp0/tp3").message()).contains("no worker for pp0/tp3 at kvpager.fan-gone.pp0.tp3");
            assertThat(p.rank(0).mapped).isEmpty();
            assertThat(p.rejoin().lost()).extracting(RankTarget::name).containsExactly("pp0/tp3");
            return p.map(2);
        })).transform(ar -> {
            PageMapFailure failure = mapFailure(ar.cause());
            assertThat(failure.reason()).isEqualTo(MissReason.RANK_DOWN);
            assertThat(failure.getMessage()).contains("not sent", "pp0/tp3", "could not rejoin");
            return ScriptedRank.start(vertx, "fan-gone", new RankTarget(0, 3));
        }).compose(back -> p.map(2).map(v -> {
            assertThat(back.tensors).isTrue();
            assertThat(back.mapped).containsExactly(2);
            assertThat(p.rejoin().lost()).isEmpty();
            assertThat(p.rejoin().rejoined()).isEqualTo(1);
            return v;
        }))).onComplete(test.succeedingThenComplete());
    }

    /**
     * A rank counted lost while it was only paused or cut off keeps its tensors and pages, and they
     * need not be the pool's any more. Its rejoin releases what it held and maps exactly the pool's
     * pages; a plain map of the pool's pages would meet pages already mapped and fail on every try.
     */
    @Test
    void aRankThatKeptItsPagesWhileCountedLostRejoinsWithExactlyThePoolsPages(Vertx vertx, VertxTestContext test) {
        pool(vertx, "fan-kept").compose(p -> p.map(1, 2, 3).compose(v -> p.on(() -> {
            ScriptedRank kept = p.rank(3);
            synchronized (kept) {
                // a page the pool unmapped while this rank was cut off: the rank never heard of it
                kept.mapped.add(9);
            }
            p.rejoin().noteDeparted(List.of(kept.rank));
            return Future.succeededFuture();
        })).compose(v -> p.map(5)).map(v -> {
            for (ScriptedRank r : p.ranks()) {
                assertThat(r.mapped).as(r.rank.name()).containsExactly(1, 2, 3, 5);
            }
            List<JsonObject> releases = p.rank(3).received("release-pages");
            assertThat(releases).hasSize(1);
            assertThat(releases.getFirst().getJsonArray("pages")).hasSize(16);
            assertThat(p.rank(0).received("release-pages")).isEmpty();
            assertThat(p.rejoin().lost()).isEmpty();
            assertThat(p.rejoin().rejoined()).isEqualTo(1);
            return v;
        })).onComplete(test.succeedingThenComplete());
    }

    /** A rejoining rank that does not confirm its pages released stays lost, and the map fails with its error, changing nothing. */
    @Test
    void aRejoinWhoseReleaseFailsLeavesTheRankLostAndMapsNothing(Vertx vertx, VertxTestContext test) {
        pool(vertx, "fan-kept-fail").compose(p -> p.map(1).compose(v -> p.on(() -> {
            p.rank(2).script("release-pages", new ScriptedRank.Fail(500, "cuMemUnmap failed: CUDA_ERROR_UNKNOWN"));
            p.rejoin().noteDeparted(List.of(p.rank(2).rank));
            return Future.succeededFuture();
        })).compose(v -> p.map(4).transform(ar -> {
            PageMapFailure failure = mapFailure(ar.cause());
            KvPagerException cause = (KvPagerException) failure.getCause();
            assertThat(cause.failureOf("pp0/tp2").message()).contains("CUDA_ERROR_UNKNOWN");
            assertThat(failure.getMessage()).contains("releasing what a rejoining rank still held", "could not rejoin");
            for (ScriptedRank r : p.ranks()) {
                assertThat(r.mapped).as(r.rank.name()).containsExactly(1);
            }
            assertThat(p.rejoin().lost()).extracting(RankTarget::name).containsExactly("pp0/tp2");
            return p.map(4);
        })).map(v -> {
            for (ScriptedRank r : p.ranks()) {
                assertThat(r.mapped).as(r.rank.name()).containsExactly(1, 4);
            }
            assertThat(p.rejoin().lost()).isEmpty();
            return v;
        })).onComplete(test.succeedingThenComplete());
    }

    @Test
    void thePoolsStagesAndGroupReachTheRanksAndARequestForAnotherGroupOrOwnerIsNotSent(Vertx vertx, VertxTestContext test) {
        pool(vertx, "fan-pp", List.of(0, 1), 2, 1007).compose(p -> p.map(9)
                .compose(v -> p.on(() -> {
                    RankFanOut fanOut = p.fanOut();
                    assertThatThrownBy(() -> fanOut.toAll(new TensorsCreatedRequest(0, fanOut.owner())))
                            .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("group 1007");
                    assertThatThrownBy(() -> fanOut.toAll(new DestroyTensorsRequest(1007, new Owner("someone-else", 1))))
                            .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("someone-else#1");
                    return fanOut.toAll(new TensorsCreatedRequest(1007, fanOut.owner()));
                }))
                .map(replies -> {
                    assertThat(p.ranks()).extracting(r -> r.rank.name()).containsExactly("pp0/tp0", "pp0/tp1", "pp1/tp0", "pp1/tp1");
                    for (ScriptedRank r : p.ranks()) {
                        assertThat(r.mapped).containsExactly(9);
                        assertThat(r.received("tensors-created")).hasSize(1);
                        assertThat(r.received("destroy-tensors")).isEmpty();
                        for (JsonObject sent : List.of(r.received("map").getFirst(), r.received("tensors-created").getFirst())) {
                            assertThat(sent.getInteger("group")).isEqualTo(1007);
                            assertThat(sent.getInteger("pp")).isEqualTo(r.rank.pp());
                            assertThat(sent.getInteger("tp")).isEqualTo(r.rank.tp());
                        }
                    }
                    return replies;
                })).onComplete(test.succeedingThenComplete());
    }
}
