package io.kvpager.impl.coordinator;

import io.kvpager.protocol.PoolRanks;
import io.kvpager.protocol.RankTarget;
import io.kvpager.FailureCode;
import io.kvpager.cache.KvPagerException;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.Vertx;
import io.vertx.core.json.JsonObject;
import io.kvpager.Geometry;
import io.kvpager.Layout;
import io.kvpager.protocol.CreateTensorsRequest;
import io.vertx.junit5.VertxExtension;
import io.vertx.junit5.VertxTestContext;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/** Creating the tensors and waiting for them, on timers, against scripted ranks. */
@ExtendWith(VertxExtension.class)
class TensorStartTest {

    private static final Geometry GEOMETRY = new Geometry(2, 2, 4096, 2L << 20, 16, Layout.PAGE_MAJOR);

    private static Future<Void> start(Vertx vertx, PoolRanks pool, long deadlineMs, boolean patient) {
        RankFanOut fanOut = new RankFanOut(vertx.eventBus(), pool, 1_000);
        Promise<Void> done = Promise.promise();
        vertx.getOrCreateContext().runOnContext(v ->
                new TensorStart(vertx, fanOut, pool.ranks(),
                        new CreateTensorsRequest(pool.group(), fanOut.owner(), GEOMETRY, false, null), deadlineMs, 10, patient).run().onComplete(done));
        return done.future();
    }

    @Test
    void everyRankCreatesItsTensorsWithThePoolsGroup(Vertx vertx, VertxTestContext test) {
        PoolRanks pool = new PoolRanks("ts-ok", List.of(0, 1), 2, 3);
        ScriptedRank.startAll(vertx, pool).compose(ranks -> start(vertx, pool, 5_000, true).map(v -> {
            for (ScriptedRank r : ranks) {
                assertThat(r.tensors).isTrue();
                JsonObject create = r.received("create-tensors").getFirst();
                assertThat(create.getInteger("group")).isEqualTo(3);
                assertThat(create.getInteger("layers")).isEqualTo(2);
                assertThat(r.received("tensors-created")).isNotEmpty();
            }
            return v;
        })).onComplete(test.succeedingThenComplete());
    }

    @Test
    void aRankThatErrsTwiceThenSucceedsStartsFine(Vertx vertx, VertxTestContext test) {
        PoolRanks pool = new PoolRanks("ts-flaky", List.of(0), 4, 0);
        ScriptedRank.startAll(vertx, pool).compose(ranks -> {
            ranks.get(2).script("tensors-created",
                    new ScriptedRank.Fail(500, "cuMemAddressReserve failed: CUDA_ERROR_OUT_OF_MEMORY"),
                    new ScriptedRank.Fail(503, "worker is starting"));
            return start(vertx, pool, 5_000, true).map(v -> {
                assertThat(ranks.get(2).received("tensors-created")).hasSize(3);
                return v;
            });
        }).onComplete(test.succeedingThenComplete());
    }

    @Test
    void aRankThatNeverCreatesItsTensorsTimesOutWithTheLastError(Vertx vertx, VertxTestContext test) {
        PoolRanks pool = new PoolRanks("ts-never", List.of(0), 4, 0);
        long deadlineMs = 150;
        ScriptedRank.startAll(vertx, pool).compose(ranks -> {
            ranks.get(1).script("tensors-created", new ScriptedRank.Fail(500, "cuMemCreate failed: CUDA_ERROR_UNKNOWN"));
            ranks.get(1).always("tensors-created", new ScriptedRank.NotYet());
            long started = System.nanoTime();
            return start(vertx, pool, deadlineMs, true).transform(ar -> {
                assertThat(ar.failed()).isTrue();
                assertThat((System.nanoTime() - started) / 1_000_000).isGreaterThanOrEqualTo(deadlineMs);
                KvPagerException failure = (KvPagerException) ar.cause();
                assertThat(failure.code()).isEqualTo(FailureCode.TIMEOUT);
                assertThat(failure.getMessage())
                        .contains("not ready on pp0/tp1 after " + deadlineMs + " ms")
                        .endsWith("; last error: pp0/tp1 DRIVER_ERROR (500): pp0/tp1 group 0: cuMemCreate failed: CUDA_ERROR_UNKNOWN");
                assertThat(failure.failures()).extracting(f -> f.rank()).containsExactly("pp0/tp1");
                return Future.succeededFuture();
            });
        }).onComplete(test.succeedingThenComplete());
    }

    @Test
    void aRankThatNeverAnswersYesTimesOutSayingSo(Vertx vertx, VertxTestContext test) {
        PoolRanks pool = new PoolRanks("ts-no", List.of(0), 1, 0);
        ScriptedRank.startAll(vertx, pool).compose(ranks -> {
            ranks.getFirst().always("tensors-created", new ScriptedRank.NotYet());
            return start(vertx, pool, 60, true).transform(ar -> {
                assertThat(ar.cause()).hasMessageEndingWith("; last error: none, the ranks answered created=false");
                return Future.succeededFuture();
            });
        }).onComplete(test.succeedingThenComplete());
    }

    @Test
    void aRankThatAppearsLateIsWaitedFor(Vertx vertx, VertxTestContext test) {
        PoolRanks pool = new PoolRanks("ts-late", List.of(0), 2, 0);
        ScriptedRank.start(vertx, "ts-late", new RankTarget(0, 0)).compose(first -> {
            Future<Void> started = start(vertx, pool, 5_000, true);
            // the second rank comes up after a few rounds have found no worker there
            vertx.setTimer(50, id -> ScriptedRank.start(vertx, "ts-late", new RankTarget(0, 1)));
            return started;
        }).onComplete(test.succeedingThenComplete());
    }

    @Test
    void anotherGeometryOnARankFailsTheStartAtOnce(Vertx vertx, VertxTestContext test) {
        PoolRanks pool = new PoolRanks("ts-conflict", List.of(0), 2, 0);
        ScriptedRank.startAll(vertx, pool).compose(ranks -> {
            ranks.get(1).script("create-tensors", new ScriptedRank.Fail(409, "tensors exist with another geometry"));
            return start(vertx, pool, 30_000, true).transform(ar -> {
                KvPagerException failure = (KvPagerException) ar.cause();
                assertThat(failure.code()).isEqualTo(FailureCode.CONFLICT);
                assertThat(failure.getMessage()).contains("create-tensors for group 0 failed on 1 of 2 ranks", "pp0/tp1",
                        "another geometry");
                return Future.succeededFuture();
            });
        }).onComplete(test.succeedingThenComplete());
    }

    @Test
    void anImpatientStartFailsAtTheFirstError(Vertx vertx, VertxTestContext test) {
        PoolRanks pool = new PoolRanks("ts-impatient", List.of(0), 2, 0);
        ScriptedRank.startAll(vertx, pool).compose(ranks -> {
            ranks.get(0).script("create-tensors", new ScriptedRank.Fail(500, "cuMemAddressReserve failed: CUDA_ERROR_UNKNOWN"));
            return start(vertx, pool, 30_000, false).transform(ar -> {
                assertThat(((KvPagerException) ar.cause()).code()).isEqualTo(FailureCode.DRIVER_ERROR);
                assertThat(ranks.get(0).received("create-tensors")).hasSize(1);
                return Future.succeededFuture();
            });
        }).onComplete(test.succeedingThenComplete());
    }
}
