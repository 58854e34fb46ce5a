package io.kvpager.impl.worker;

import io.kvpager.Layout;
import io.kvpager.protocol.WorkerAction;
import io.vertx.core.DeploymentOptions;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.eventbus.ReplyException;
import io.vertx.core.json.JsonObject;
import io.vertx.junit5.VertxExtension;
import io.vertx.junit5.VertxTestContext;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import java.util.ArrayList;
import java.util.List;

import static io.kvpager.impl.worker.SimRank.group;
import static io.kvpager.impl.worker.SimRank.pages;
import static io.kvpager.impl.worker.SimRank.tensors;
import static org.assertj.core.api.Assertions.assertThat;

/** Every handler and every device call runs on the rank's one thread; whatever a handler throws is answered. */
@ExtendWith(VertxExtension.class)
class RankThreadTest {

    @Test
    void everyDeviceCallAndHandlerRunsOnTheRanksOneThread(Vertx vertx, VertxTestContext test) {
        SimRank rank = new SimRank(vertx);
        List<Future<JsonObject>> concurrent = new ArrayList<>();
        rank.deploy()
                .compose(id -> rank.send(WorkerAction.CREATE_TENSORS, tensors(1, Layout.PER_LAYER, 64)))
                .compose(created -> {
                    // many requests in flight at once, from another thread than the event loop's
                    for (int p = 0; p < 64; p++) {
                        concurrent.add(rank.send(WorkerAction.MAP, pages(1, "m" + p, p)));
                        concurrent.add(rank.send(WorkerAction.STATS, new JsonObject()));
                    }
                    return Future.all(concurrent);
                })
                .compose(all -> rank.send(WorkerAction.VIEWS, group(1)))
                .compose(views -> vertx.undeploy(rank.deploymentId()))
                .onComplete(test.succeeding(v -> test.verify(() -> {
                    String pool = rank.config().workerPoolName();
                    assertThat(pool).isEqualTo("kvpager-gpu0-pp0-tp1");
                    assertThat(rank.device().threads()).hasSize(1).allSatisfy(name -> assertThat(name).startsWith(pool + "-"));
                    assertThat(rank.device().calls()).startsWith("attach").endsWith("close").contains("map", "unmap", "release", "free");
                    String thread = rank.device().threads().iterator().next();
                    assertThat(concurrent).filteredOn(f -> f.result().containsKey("thread"))
                            .allSatisfy(stats -> assertThat(stats.result().getString("thread")).isEqualTo(thread));
                    test.completeNow();
                })));
    }

    @Test
    void aHandlerThatThrowsIsAnsweredWithAFailureNotATimeout(Vertx vertx, VertxTestContext test) {
        SimRank rank = new SimRank(vertx);
        rank.deploy()
                .compose(id -> rank.send(WorkerAction.CREATE_TENSORS, tensors(1, Layout.PAGE_MAJOR, 8)))
                .compose(created -> rank.send(WorkerAction.MAP, pages(1, "m1", 0)))
                .compose(mapped -> {
                    SimRank.DeviceState before = rank.state();
                    rank.device().beforeCall(call -> {
                        if (call.equals("setAccess") || call.equals("memoryInfo")) {
                            throw new IllegalStateException("bug in " + call);
                        }
                    });
                    return Future.all(
                            rank.fails(WorkerAction.MAP, pages(1, "m2", 1, 2)),
                            rank.fails(WorkerAction.STATS, new JsonObject())).map(all -> {
                        assertThat(rank.state()).isEqualTo(before);
                        return all;
                    });
                })
                .onComplete(test.succeeding(all -> test.verify(() -> {
                    ReplyException map = all.resultAt(0);
                    ReplyException stats = all.resultAt(1);
                    assertThat(map.failureCode()).isEqualTo(500);
                    assertThat(map.getMessage()).isEqualTo("pp0/tp1 group 1 page 1: internal error: java.lang.IllegalStateException: bug in setAccess");
                    assertThat(stats.failureCode()).isEqualTo(500);
                    assertThat(stats.getMessage()).isEqualTo("pp0/tp1: internal error: java.lang.IllegalStateException: bug in memoryInfo");
                    test.completeNow();
                })));
    }

    @Test
    void aWorkerDeployedOnAnEventLoopRefusesToStart(Vertx vertx, VertxTestContext test) {
        SimRank rank = new SimRank(vertx);
        vertx.deployVerticle(new RankWorkerVerticle(rank), new DeploymentOptions().setConfig(rank.config().toJson()))
                .onComplete(test.failing(e -> test.verify(() -> {
                    assertThat(e).isInstanceOf(IllegalStateException.class)
                            .hasMessage("pp0/tp1: a rank worker must run on its own worker thread; deploy it with "
                                    + "RankWorkers.deploy or RankWorkers.deploymentOptions");
                    assertThat(rank.sim()).as("no device opened").isNull();
                    test.completeNow();
                })));
    }
}
