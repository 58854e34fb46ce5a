package io.kvpager.impl.worker;

import io.kvpager.Layout;
import io.kvpager.protocol.WorkerAction;
import io.kvpager.sim.DriverCall;
import io.kvpager.sim.Fault;
import io.kvpager.spi.DeviceException;
import io.vertx.core.Vertx;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import io.vertx.junit5.VertxExtension;
import io.vertx.junit5.VertxTestContext;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import static io.kvpager.impl.worker.SimRank.pages;
import static io.kvpager.impl.worker.SimRank.tensors;
import static org.assertj.core.api.Assertions.assertThat;

/** A retried request (same requestId) gets the first answer and does not touch the device again. */
@ExtendWith(VertxExtension.class)
class RequestIdTest {

    @Test
    void repeatedMapGetsTheFirstAnswerWithoutMappingAgain(Vertx vertx, VertxTestContext test) {
        SimRank rank = new SimRank(vertx);
        rank.deploy()
                .compose(id -> rank.send(WorkerAction.CREATE_TENSORS, tensors(1, Layout.PAGE_MAJOR, 8)))
                .compose(created -> rank.send(WorkerAction.MAP, pages(1, "m-1", 2, 4)))
                .compose(first -> rank.send(WorkerAction.UNMAP, pages(1, "u-1", 2, 4))
                        .compose(unmapped -> {
                            int calls = rank.device().calls().size();
                            return rank.send(WorkerAction.MAP, pages(1, "m-1", 2, 4)).map(again -> {
                                assertThat(again).isEqualTo(first);
                                assertThat(rank.device().calls()).as("no device call for a retried request").hasSize(calls);
                                assertThat(rank.sim().handlesAlive()).as("the pages stay unmapped").isZero();
                                return again;
                            });
                        }))
                .compose(again -> rank.send(WorkerAction.UNMAP, pages(1, "u-1", 2, 4)))
                .onComplete(test.succeeding(again -> test.verify(() -> {
                    assertThat(again.getJsonArray("unmapped")).isEqualTo(new JsonArray().add(2).add(4));
                    test.completeNow();
                })));
    }

    @Test
    void repeatedFailedMapGetsTheSameFailure(Vertx vertx, VertxTestContext test) {
        SimRank rank = new SimRank(vertx);
        rank.deploy()
                .compose(id -> rank.send(WorkerAction.CREATE_TENSORS, tensors(1, Layout.PER_LAYER, 8)))
                .compose(created -> {
                    rank.sim().faults().add(Fault.error(DriverCall.CREATE, DeviceException.OUT_OF_MEMORY).nth(6));
                    return rank.fails(WorkerAction.MAP, pages(1, "m-2", 0, 1, 2));
                })
                .compose(first -> {
                    rank.sim().faults().clear();
                    return rank.fails(WorkerAction.MAP, pages(1, "m-2", 0, 1, 2)).map(again -> {
                        assertThat(again.failureCode()).isEqualTo(first.failureCode()).isEqualTo(507);
                        assertThat(again.getMessage()).isEqualTo(first.getMessage())
                                .startsWith("pp0/tp1 group 1 page 1: cuMemCreate failed: CUDA_ERROR_OUT_OF_MEMORY");
                        assertThat(rank.sim().handlesAlive()).isZero();
                        return again;
                    });
                })
                // a new requestId is a new attempt
                .compose(again -> rank.send(WorkerAction.MAP, pages(1, "m-3", 0, 1, 2)))
                .onComplete(test.succeeding(mapped -> test.verify(() -> {
                    assertThat(rank.sim().handlesAlive()).isEqualTo(12);
                    test.completeNow();
                })));
    }

    @Test
    void requestIdReusedForAnotherRequestIs400(Vertx vertx, VertxTestContext test) {
        SimRank rank = new SimRank(vertx);
        rank.deploy()
                .compose(id -> rank.send(WorkerAction.CREATE_TENSORS, tensors(1, Layout.PAGE_MAJOR, 8)))
                .compose(created -> rank.send(WorkerAction.MAP, pages(1, "r", 2)))
                .compose(mapped -> rank.fails(WorkerAction.UNMAP, pages(1, "r", 2)))
                .compose(failure -> {
                    assertThat(failure.failureCode()).isEqualTo(400);
                    assertThat(failure.getMessage()).startsWith("pp0/tp1 group 1: requestId 'r' was already used for another request: ");
                    assertThat(rank.sim().handlesAlive()).isEqualTo(1);
                    return rank.fails(WorkerAction.MAP, pages(1, "r", 3));
                })
                .onComplete(test.succeeding(failure -> test.verify(() -> {
                    assertThat(failure.failureCode()).isEqualTo(400);
                    assertThat(rank.sim().handlesAlive()).isEqualTo(1);
                    test.completeNow();
                })));
    }

    @Test
    void aRetryIsKnownByWhatItAsksNotByTheRestOfItsBody(Vertx vertx, VertxTestContext test) {
        SimRank rank = new SimRank(vertx);
        rank.deploy()
                .compose(id -> rank.send(WorkerAction.CREATE_TENSORS, tensors(1, Layout.PAGE_MAJOR, 8)))
                .compose(created -> rank.send(WorkerAction.MAP, pages(1, "k", 2, 5)))
                .compose(first -> {
                    int calls = rank.device().calls().size();
                    // the same group and pages: the same request, whatever else the body carries
                    JsonObject retry = pages(1, "k", 2, 5).put("tp", 1).put("note", "x".repeat(10_000));
                    return rank.send(WorkerAction.MAP, retry).map(again -> {
                        assertThat(again).isEqualTo(first);
                        assertThat(rank.device().calls()).as("no device call for a retried request").hasSize(calls);
                        return again;
                    });
                })
                .onComplete(test.succeeding(again -> test.verify(test::completeNow)));
    }

    @Test
    void aRefusedRequestIsNotRememberedSoItsIdMayCarryTheRequestItWasMeantFor(Vertx vertx, VertxTestContext test) {
        SimRank rank = new SimRank(vertx);
        JsonArray huge = new JsonArray();
        for (int i = 0; i < 100_000; i++) {
            huge.add(i);
        }
        rank.deploy()
                .compose(id -> rank.send(WorkerAction.CREATE_TENSORS, tensors(1, Layout.PAGE_MAJOR, 8)))
                // refused before anything happened: a group without tensors, then page ids by the hundred thousand
                .compose(created -> rank.fails(WorkerAction.MAP, pages(9, "h").put("pages", huge)))
                .compose(noTensors -> {
                    assertThat(noTensors.failureCode()).isEqualTo(404);
                    return rank.fails(WorkerAction.MAP, pages(1, "h").put("pages", huge));
                })
                .compose(tooMany -> {
                    assertThat(tooMany.failureCode()).isEqualTo(400);
                    return rank.send(WorkerAction.MAP, pages(1, "h", 3));
                })
                .onComplete(test.succeeding(mapped -> test.verify(() -> {
                    assertThat(mapped.getJsonArray("mapped")).isEqualTo(new JsonArray().add(3));
                    assertThat(rank.sim().handlesAlive()).isEqualTo(1);
                    test.completeNow();
                })));
    }

    @Test
    void anOversizedRequestIdIs400(Vertx vertx, VertxTestContext test) {
        SimRank rank = new SimRank(vertx);
        rank.deploy()
                .compose(id -> rank.send(WorkerAction.CREATE_TENSORS, tensors(1, Layout.PAGE_MAJOR, 8)))
                .compose(created -> rank.fails(WorkerAction.MAP, pages(1, "r".repeat(257), 3)))
                .onComplete(test.succeeding(failure -> test.verify(() -> {
                    assertThat(failure.failureCode()).isEqualTo(400);
                    assertThat(failure.getMessage()).isEqualTo("pp0/tp1: requestId is 257 characters long; at most 256 are taken");
                    assertThat(rank.sim().handlesAlive()).isZero();
                    test.completeNow();
                })));
    }

    @Test
    void statsAndViewsNeedNoRequestId(Vertx vertx, VertxTestContext test) {
        SimRank rank = new SimRank(vertx);
        rank.deploy()
                .compose(id -> rank.send(WorkerAction.STATS, new JsonObject()))
                .onComplete(test.succeeding(stats -> test.verify(() -> {
                    assertThat(stats.getJsonObject("groups")).isEmpty();
                    test.completeNow();
                })));
    }
}
