package io.kvpager.impl.worker;

import io.kvpager.Layout;
import io.vertx.core.Context;
import io.vertx.core.DeploymentOptions;
import io.vertx.core.ThreadingModel;
import io.vertx.core.Vertx;
import io.vertx.core.eventbus.DeliveryOptions;
import io.vertx.core.eventbus.ReplyException;
import io.vertx.core.json.JsonObject;
import io.vertx.junit5.VertxExtension;
import io.vertx.junit5.VertxTestContext;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Consumer;

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

    /**
     * In a cluster, tensors-created names the group's owner on the rank and says whether its node,
     * and the asker's, are members as the worker sees the cluster: what a displaced coordinator
     * reads before it claims the group again.
     */
    /**
     * A node's coordinator incarnations have rising epochs: an older one whose start or rejoin
     * outlived its displacement is refused (409) once a newer one of its node claimed the group,
     * and the newer one keeps it; another node's owner may still claim it.
     */
    @Test
    void anOlderIncarnationOfTheSameNodeNeverTakesTheGroupFromANewerOne(Vertx vertx, VertxTestContext test) {
        WorkerConfig config = new WorkerConfig(new JsonObject().put("instance", "epochs").put("pp", 0).put("tp", 0)
                .put("device", "sim").put("gpu", 0).put("sim", new JsonObject().put("gpuKey", "rank-workers-epochs")));
        String address = "kvpager.epochs.pp0.tp0";
        DeliveryOptions create = new DeliveryOptions().addHeader("action", "create-tensors");
        DeliveryOptions created = new DeliveryOptions().addHeader("action", "tensors-created");
        RankWorkers.deploy(vertx, config, NodeDepartures.NONE)
                .compose(id -> vertx.eventBus().request(address, tensors(0, Layout.PAGE_MAJOR, 4).put("owner", "node-a#2"), create))
                .compose(newer -> vertx.eventBus().<JsonObject>request(address, tensors(0, Layout.PAGE_MAJOR, 4).put("owner", "node-a#1"), create))
                .onComplete(test.failing(older -> test.verify(() -> {
                    ReplyException refused = (ReplyException) older;
                    assertThat(refused.failureCode()).isEqualTo(409);
                    assertThat(refused.getMessage()).contains("owner node-a#1 is older than owner epoch 2 of the same node");
                })))
                .recover(refused -> vertx.eventBus().<JsonObject>request(address, new JsonObject().put("group", 0).put("owner", "node-a#2"), created))
                .compose(kept -> {
                    test.verify(() -> assertThat(kept.body().getBoolean("created")).as("the newer owner keeps the group").isTrue());
                    return vertx.eventBus().request(address, tensors(0, Layout.PAGE_MAJOR, 4).put("owner", "node-b#1"), create);
                })
                .onComplete(test.succeedingThenComplete());
    }

    @Test
    void tensorsCreatedNamesTheOwnerAndWhichNodesTheWorkerCountsMembers(Vertx vertx, VertxTestContext test) {
        Set<String> present = ConcurrentHashMap.newKeySet();
        present.add("test-node");
        NodeDepartures members = new NodeDepartures() {
            @Override
            public Runnable subscribe(Context context, Consumer<String> onLeft) {
                return () -> { };
            }

            @Override
            public boolean present(String nodeId) {
                return present.contains(nodeId);
            }
        };
        WorkerConfig config = new WorkerConfig(new JsonObject().put("instance", "members").put("pp", 0).put("tp", 0)
                .put("device", "sim").put("gpu", 0).put("sim", new JsonObject().put("gpuKey", "rank-workers-members")));
        String address = "kvpager.members.pp0.tp0";
        DeliveryOptions create = new DeliveryOptions().addHeader("action", "create-tensors");
        DeliveryOptions created = new DeliveryOptions().addHeader("action", "tensors-created");
        JsonObject byOwner = new JsonObject().put("group", 0).put("owner", SimRank.OWNER);
        JsonObject byAnother = new JsonObject().put("group", 0).put("owner", "split-node#4");
        RankWorkers.deploy(vertx, config, members)
                .compose(id -> vertx.eventBus().request(address, tensors(0, Layout.PAGE_MAJOR, 4), create))
                .compose(done -> vertx.eventBus().<JsonObject>request(address, byOwner, created))
                .compose(own -> {
                    test.verify(() -> assertThat(own.body().copy().put("leaseMs", 0)).isEqualTo(new JsonObject().put("created", true)
                            .put("owner", SimRank.OWNER).put("ownerMember", true).put("askerMember", true).put("leaseMs", 0)));
                    return vertx.eventBus().<JsonObject>request(address, byAnother, created);
                })
                .compose(other -> {
                    test.verify(() -> assertThat(other.body()).isEqualTo(new JsonObject().put("created", false)
                            .put("owner", SimRank.OWNER).put("ownerMember", true).put("askerMember", false)));
                    present.remove("test-node");
                    return vertx.eventBus().<JsonObject>request(address, byAnother, created);
                })
                .onComplete(test.succeeding(gone -> test.verify(() -> {
                    assertThat(gone.body()).isEqualTo(new JsonObject().put("created", false)
                            .put("owner", SimRank.OWNER).put("ownerMember", false).put("askerMember", false));
                    test.completeNow();
                })));
    }
}
