package io.kvpager.worker;

import io.kvpager.sim.SimOptions;
import io.vertx.core.Vertx;
import io.vertx.core.eventbus.DeliveryOptions;
import io.vertx.core.json.JsonObject;
import io.vertx.junit5.VertxExtension;
import io.vertx.junit5.VertxTestContext;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** Deploying a worker with the public API alone, as an embedder does. */
@ExtendWith(VertxExtension.class)
class RankWorkerTest {

    @Test
    void deploysAWorkerThatAnswersAtItsAddressAndUndeploys(Vertx vertx, VertxTestContext test) {
        RankWorkerOptions options = new RankWorkerOptions().setInstance("public-api").setPp(1).setTp(0).setGpu(1)
                .setSim(SimOptions.defaults().withGpuKey("rank-worker-test"));
        DeliveryOptions stats = new DeliveryOptions().addHeader("action", "stats");
        RankWorker.deploy(vertx, options).compose(worker -> {
            test.verify(() -> {
                assertThat(worker.rank()).isEqualTo("pp1/tp0");
                assertThat(worker.address()).isEqualTo("kvpager.public-api.pp1.tp0").isEqualTo(RankWorker.address("public-api", 1, 0));
                assertThat(worker.options()).isEqualTo(options);
                assertThat(vertx.deploymentIDs()).contains(worker.deploymentId());
            });
            return vertx.eventBus().<JsonObject>request(worker.address(), new JsonObject(), stats)
                    .compose(reply -> {
                        test.verify(() -> {
                            assertThat(reply.body().getString("rank")).isEqualTo("pp1/tp0");
                            assertThat(reply.body().getString("thread")).isEqualTo("kvpager-gpu1-pp1-tp0-0");
                        });
                        return worker.undeploy().map(worker);
                    });
        }).onComplete(test.succeeding(worker -> test.verify(() -> {
            assertThat(vertx.deploymentIDs()).doesNotContain(worker.deploymentId());
            test.completeNow();
        })));
    }

    @Test
    void invalidOptionsFailTheDeployAndDeployNothing(Vertx vertx, VertxTestContext test) {
        RankWorker.deploy(vertx, new RankWorkerOptions().setInstance("no-rank").setPp(0)).onComplete(test.failing(e -> test.verify(() -> {
            assertThat(e).isInstanceOf(IllegalArgumentException.class).hasMessageStartingWith("tp is required");
            assertThat(vertx.deploymentIDs()).isEmpty();
            test.completeNow();
        })));
    }

    @Test
    void badSimOptionsAreRefusedBeforeAnythingIsDeployed(Vertx vertx) {
        assertThatThrownBy(() -> new RankWorkerOptions(new JsonObject().put("instance", "bad-sim").put("pp", 0).put("tp", 0)
                .put("sim", new JsonObject().put("capacity", 5)))).isInstanceOf(IllegalArgumentException.class).hasMessageContaining("capacity");
        assertThat(vertx.deploymentIDs()).isEmpty();
    }
}
