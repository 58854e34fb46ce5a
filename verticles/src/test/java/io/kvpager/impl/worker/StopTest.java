package io.kvpager.impl.worker;

import io.kvpager.Layout;
import io.kvpager.protocol.WorkerAction;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.eventbus.ReplyException;
import io.vertx.core.json.JsonObject;
import io.vertx.junit5.VertxExtension;
import io.vertx.junit5.VertxTestContext;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;

import static io.kvpager.impl.worker.SimRank.pages;
import static io.kvpager.impl.worker.SimRank.tensors;
import static org.assertj.core.api.Assertions.assertThat;

/** Stopping gives everything back before the device closes, and answers requests meanwhile with 503. */
@ExtendWith(VertxExtension.class)
class StopTest {

    @Test
    void stopUnmapsAndReleasesEverythingBeforeClosingTheDevice(Vertx vertx, VertxTestContext test) {
        SimRank rank = new SimRank(vertx);
        AtomicReference<SimRank.DeviceState> atClose = new AtomicReference<>();
        rank.deploy()
                .compose(id -> rank.send(WorkerAction.CREATE_TENSORS, tensors(1, Layout.PAGE_MAJOR, 8)))
                .compose(created -> rank.send(WorkerAction.CREATE_TENSORS, tensors(2, Layout.PER_LAYER, 8).put("zeroPage", true)))
                .compose(created -> rank.send(WorkerAction.MAP, pages(1, "a", 0, 1, 5)))
                .compose(mapped -> rank.send(WorkerAction.MAP, pages(2, "b", 3, 7)))
                .compose(mapped -> {
                    assertThat(rank.sim().handlesAlive()).isEqualTo(3 + 1 + 2 * 4);
                    rank.device().beforeCall(call -> {
                        if (call.equals("close")) {
                            atClose.set(rank.state());
                        }
                    });
                    return vertx.undeploy(rank.deploymentId());
                })
                .onComplete(test.succeeding(v -> test.verify(() -> {
                    assertThat(atClose.get()).as("what the worker left for close() to clean up")
                            .isEqualTo(new SimRank.DeviceState(0, 0, List.of(), List.of()));
                    assertThat(rank.sim().isClosed()).isTrue();
                    test.completeNow();
                })));
    }

    @Test
    void requestsArrivingWhileStoppingGet503(Vertx vertx, VertxTestContext test) {
        SimRank rank = new SimRank(vertx);
        AtomicBoolean stopping = new AtomicBoolean();
        AtomicReference<Future<JsonObject>> duringStop = new AtomicReference<>();
        rank.deploy()
                .compose(id -> rank.send(WorkerAction.CREATE_TENSORS, tensors(1, Layout.PAGE_MAJOR, 8)))
                .compose(created -> rank.send(WorkerAction.MAP, pages(1, "a", 0)))
                .compose(mapped -> {
                    rank.device().beforeCall(call -> {
                        // inside the worker's first device call of stopping: queue a request behind it
                        if (stopping.get() && duringStop.get() == null) {
                            CompletableFuture.runAsync(() -> duringStop.set(rank.send(WorkerAction.MAP, pages(1, "b", 1))))
                                    .orTimeout(10, TimeUnit.SECONDS).join();
                        }
                    });
                    stopping.set(true);
                    return vertx.undeploy(rank.deploymentId());
                })
                .compose(v -> duringStop.get().transform(ar -> Future.succeededFuture(ar.cause())))
                .onComplete(test.succeeding(failure -> test.verify(() -> {
                    assertThat(failure).isInstanceOf(ReplyException.class);
                    assertThat(((ReplyException) failure).failureCode()).isEqualTo(503);
                    assertThat(failure).hasMessage("pp0/tp1: the worker is stopping");
                    assertThat(rank.sim().isClosed()).isTrue();
                    test.completeNow();
                })));
    }
}
