package io.kvpager.impl.worker;

import io.kvpager.Layout;
import io.vertx.core.DeploymentOptions;
import io.vertx.core.ThreadingModel;
import io.vertx.core.Vertx;
import io.vertx.core.eventbus.DeliveryOptions;
import io.vertx.core.json.JsonObject;
import io.vertx.junit5.VertxExtension;
import io.vertx.junit5.VertxTestContext;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import static io.kvpager.impl.worker.SimRank.pages;
import static io.kvpager.impl.worker.SimRank.tensors;
import static org.assertj.core.api.Assertions.assertThat;

/** Deploying through {@link RankWorkers}, with the device opened by its kind's factory. */
@ExtendWith(VertxExtension.class)
class RankWorkersTest {

    @Test
    void deploymentOptionsPinTheWorkerToOneNamedThread() {
        WorkerConfig config = new WorkerConfig("m", 2, 5, "sim", 3);
        DeploymentOptions options = RankWorkers.deploymentOptions(config);
        assertThat(options.getThreadingModel()).isEqualTo(ThreadingModel.WORKER);
        assertThat(options.getWorkerPoolName()).isEqualTo("kvpager-gpu3-pp2-tp5");
        assertThat(options.getWorkerPoolSize()).isEqualTo(1);
        assertThat(options.getInstances()).isEqualTo(1);
        assertThat(options.getConfig()).isEqualTo(config.toJson());
    }

    @Test
    void deploysASimWorkerByKindAndServesItsAddress(Vertx vertx, VertxTestContext test) {
        WorkerConfig config = new WorkerConfig(new JsonObject().put("instance", "by-kind").put("pp", 1).put("tp", 0)
                .put("device", "sim").put("gpu", 1).put("sim", new JsonObject().put("gpuKey", "rank-workers-test")));
        DeliveryOptions create = new DeliveryOptions().addHeader("action", "create-tensors");
        DeliveryOptions map = new DeliveryOptions().addHeader("action", "map");
        DeliveryOptions stats = new DeliveryOptions().addHeader("action", "stats");
        RankWorkers.deploy(vertx, config)
                .compose(id -> vertx.eventBus().request("kvpager.by-kind.pp1.tp0", tensors(0, Layout.PAGE_MAJOR, 4), create))
                .compose(created -> vertx.eventBus().request("kvpager.by-kind.pp1.tp0", pages(0, "r", 1, 2), map))
                .compose(mapped -> vertx.eventBus().<JsonObject>request("kvpager.by-kind.pp1.tp0", new JsonObject(), stats))
                .onComplete(test.succeeding(reply -> test.verify(() -> {
                    JsonObject body = reply.body();
                    assertThat(body.getString("rank")).isEqualTo("pp1/tp0");
                    assertThat(body.getString("device")).isEqualTo("sim:rank-workers-test/1 pp1/tp0");
                    assertThat(body.getString("thread")).isEqualTo("kvpager-gpu1-pp1-tp0-0");
                    assertThat(body.getInteger("handlesAlive")).isEqualTo(2);
                    test.completeNow();
                })));
    }

    @Test
    void badSimOptionsFailTheDeployment(Vertx vertx, VertxTestContext test) {
        WorkerConfig config = new WorkerConfig("bad-sim", 0, 0, "sim", 0, new JsonObject().put("capacity", 5), null);
        RankWorkers.deploy(vertx, config).onComplete(test.failing(e -> test.verify(() -> {
            assertThat(e).isInstanceOf(IllegalArgumentException.class).hasMessageContaining("capacity");
            test.completeNow();
        })));
    }
}
