package io.kvpager.impl.worker;

import io.kvpager.Layout;
import io.kvpager.protocol.WorkerAction;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.json.JsonObject;
import io.vertx.junit5.VertxExtension;
import io.vertx.junit5.VertxTestContext;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import java.util.List;
import java.util.concurrent.atomic.AtomicReference;

import static io.kvpager.impl.worker.SimRank.group;
import static io.kvpager.impl.worker.SimRank.pages;
import static io.kvpager.impl.worker.SimRank.tensors;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@code keep-handles}: the idle handles a coordinator asks a rank to keep for its group on top of
 * the group's pool options. A {@code PAGE_MAJOR} page id here is one handle of 2 layers × 2
 * buffers × 2 MiB.
 */
@ExtendWith(VertxExtension.class)
class KeepHandlesTest {

    private static JsonObject keep(int group, int idlePages) {
        return group(group).put("idlePages", idlePages);
    }

    @Test
    void unmappedHandlesWaitForTheNextMapUpToTheCountAndGoWhenItIsLowered(Vertx vertx, VertxTestContext test) {
        SimRank rank = new SimRank(vertx);
        AtomicReference<Integer> mark = new AtomicReference<>();
        rank.deploy()
                .compose(id -> rank.send(WorkerAction.CREATE_TENSORS, tensors(1, Layout.PAGE_MAJOR, 8)))
                .compose(created -> rank.send(WorkerAction.KEEP_HANDLES, keep(1, 2)))
                .compose(kept -> {
                    assertThat(kept).isEqualTo(new JsonObject().put("idlePages", 2).put("idleHandles", 0));
                    return rank.send(WorkerAction.MAP, pages(1, "m1", 0, 1, 2));
                })
                .compose(mapped -> rank.send(WorkerAction.UNMAP, pages(1, "u1", 0, 1, 2)))
                .compose(unmapped -> {
                    assertThat(rank.sim().handlesAlive()).as("two of the three handles kept").isEqualTo(2);
                    mark.set(rank.device().calls().size());
                    return rank.send(WorkerAction.MAP, pages(1, "m2", 5, 6));
                })
                .compose(mapped -> {
                    assertThat(rank.callsSince(mark.get(), "create")).as("the map takes the kept handles").isZero();
                    return rank.send(WorkerAction.UNMAP, pages(1, "u2", 5, 6));
                })
                .compose(unmapped -> {
                    assertThat(rank.callsSince(mark.get(), "release")).isZero();
                    return rank.send(WorkerAction.STATS, new JsonObject());
                })
                .compose(stats -> {
                    assertThat(stats.getInteger("pooledHandles")).isEqualTo(2);
                    assertThat(stats.getJsonObject("groups").getJsonObject("1").getJsonObject("handlePool").getInteger("idlePages"))
                            .isEqualTo(2);
                    return rank.send(WorkerAction.KEEP_HANDLES, keep(1, 0));
                })
                .onComplete(test.succeeding(lowered -> test.verify(() -> {
                    assertThat(lowered).isEqualTo(new JsonObject().put("idlePages", 0).put("idleHandles", 0));
                    assertThat(rank.sim().handlesAlive()).as("released at once").isZero();
                    test.completeNow();
                })));
    }

    @Test
    void badCountsOtherOwnersAndMissingTensorsAreRefusedAndChangeNothing(Vertx vertx, VertxTestContext test) {
        SimRank rank = new SimRank(vertx);
        AtomicReference<SimRank.DeviceState> before = new AtomicReference<>();
        rank.deploy()
                .compose(id -> rank.send(WorkerAction.CREATE_TENSORS, tensors(1, Layout.PAGE_MAJOR, 8)
                        .put("handlePool", new JsonObject().put("boundPages", 3))))
                .compose(created -> rank.send(WorkerAction.KEEP_HANDLES, keep(1, 1)))
                .compose(kept -> rank.send(WorkerAction.MAP, pages(1, "m", 0, 1, 2, 3)))
                .compose(mapped -> rank.send(WorkerAction.UNMAP, pages(1, "u", 0, 1, 2, 3)))
                .compose(unmapped -> {
                    before.set(rank.state());
                    assertThat(before.get().handles()).as("bound 3 and one kept").isEqualTo(4);
                    return rank.fails(WorkerAction.KEEP_HANDLES, keep(1, 6));
                })
                .compose(tooMany -> {
                    assertThat(tooMany.failureCode()).isEqualTo(400);
                    assertThat(tooMany.getMessage()).isEqualTo("pp0/tp1 group 1: idlePages must be 0 to 5 (the group's 8 pages"
                            + " less its handlePool.boundPages 3), got 6");
                    return rank.fails(WorkerAction.KEEP_HANDLES, keep(1, 0).put("owner", "other-node#3"));
                })
                .compose(otherOwner -> {
                    assertThat(otherOwner.failureCode()).isEqualTo(409);
                    assertThat(otherOwner.getMessage()).contains("not by other-node#3");
                    return rank.fails(WorkerAction.KEEP_HANDLES, keep(2, 0));
                })
                .compose(noTensors -> {
                    assertThat(noTensors.failureCode()).isEqualTo(404);
                    return rank.fails(WorkerAction.KEEP_HANDLES, keep(1, -1));
                })
                .compose(negative -> {
                    assertThat(negative.failureCode()).isEqualTo(400);
                    assertThat(rank.state()).isEqualTo(before.get());
                    return rank.send(WorkerAction.STATS, new JsonObject());
                })
                .onComplete(test.succeeding(stats -> test.verify(() -> {
                    assertThat(stats.getJsonObject("groups").getJsonObject("1").getJsonObject("handlePool"))
                            .isEqualTo(new JsonObject().put("prefillPages", 0).put("boundPages", 3).put("idlePages", 1));
                    test.completeNow();
                })));
    }

    @Test
    void destroyAndStopGiveTheKeptHandlesBack(Vertx vertx, VertxTestContext test) {
        SimRank rank = new SimRank(vertx);
        rank.deploy()
                .compose(id -> Future.all(rank.send(WorkerAction.CREATE_TENSORS, tensors(1, Layout.PAGE_MAJOR, 8)),
                        rank.send(WorkerAction.CREATE_TENSORS, tensors(2, Layout.PAGE_MAJOR, 8))))
                .compose(created -> Future.all(rank.send(WorkerAction.KEEP_HANDLES, keep(1, 2)),
                        rank.send(WorkerAction.KEEP_HANDLES, keep(2, 1))))
                .compose(kept -> rank.send(WorkerAction.MAP, pages(1, "m1", 0, 1, 2)))
                .compose(mapped -> rank.send(WorkerAction.UNMAP, pages(1, "u1", 0, 1, 2)))
                .compose(unmapped -> {
                    assertThat(rank.sim().handlesAlive()).as("groups of one size share the pool: 2 + 1 kept").isEqualTo(3);
                    return rank.send(WorkerAction.DESTROY_TENSORS, group(1));
                })
                .compose(destroyed -> {
                    assertThat(rank.sim().handlesAlive()).as("group 2 still keeps one").isEqualTo(1);
                    return vertx.undeploy(rank.deploymentId());
                })
                .onComplete(test.succeeding(stopped -> test.verify(() -> {
                    assertThat(rank.sim().handlesAlive()).isZero();
                    assertThat(rank.state().mappings()).isEqualTo(List.of());
                    test.completeNow();
                })));
    }
}
