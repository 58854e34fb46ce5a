package io.kvpager.impl.worker;

import io.kvpager.Layout;
import io.kvpager.protocol.WorkerAction;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import io.vertx.junit5.VertxExtension;
import io.vertx.junit5.VertxTestContext;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import java.util.List;
import java.util.concurrent.atomic.AtomicReference;

import static io.kvpager.impl.worker.SimRank.PAGE_BYTES;
import static io.kvpager.impl.worker.SimRank.group;
import static io.kvpager.impl.worker.SimRank.pages;
import static io.kvpager.impl.worker.SimRank.tensors;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * The rank's handle pool on the map and unmap paths: unmapped handles wait idle for the next map
 * up to the groups' bounds, beyond which they are released; a failed batch and a failed prefill
 * leave the device holding what it held; destroy and stop give pooled handles back. Tensors are
 * 2 layers × 2 buffers of 2 MiB pages, so a {@code PER_LAYER} page id is four 2 MiB handles.
 */
@ExtendWith(VertxExtension.class)
class PooledHandlesTest {

    private static final SimRank.DeviceState NOTHING = new SimRank.DeviceState(0, 0, List.of(), List.of());

    @Test
    void aRemapAfterUnmapTakesPooledHandlesAndCreatesNone(Vertx vertx, VertxTestContext test) {
        SimRank rank = new SimRank(vertx);
        AtomicReference<Integer> mark = new AtomicReference<>();
        rank.deploy()
                .compose(id -> rank.send(WorkerAction.CREATE_TENSORS, tensors(1, Layout.PER_LAYER, 8)))
                .compose(created -> rank.send(WorkerAction.MAP, pages(1, "m1", 0, 1)))
                .compose(mapped -> {
                    assertThat(rank.callsSince(0, "create")).isEqualTo(8);
                    mark.set(rank.device().calls().size());
                    return rank.send(WorkerAction.UNMAP, pages(1, "u1", 0, 1));
                })
                .compose(unmapped -> {
                    assertThat(rank.callsSince(mark.get(), "release")).as("unmap keeps the handles").isZero();
                    assertThat(rank.sim().handlesAlive()).isEqualTo(8);
                    assertThat(rank.sim().mappings()).isEmpty();
                    return rank.send(WorkerAction.STATS, new JsonObject());
                })
                .compose(stats -> {
                    assertThat(stats.getInteger("pooledHandles")).isEqualTo(8);
                    assertThat(stats.getLong("pooledBytes")).isEqualTo(8 * PAGE_BYTES);
                    assertThat(stats.getInteger("handlesAlive")).isEqualTo(8);
                    assertThat(stats.getLong("deviceUsedBytes")).as("idle handles are used memory").isEqualTo(8 * PAGE_BYTES);
                    assertThat(stats.getJsonObject("groups").getJsonObject("1").getInteger("handles")).isZero();
                    mark.set(rank.device().calls().size());
                    return rank.send(WorkerAction.MAP, pages(1, "m2", 5, 2));
                })
                .compose(mapped -> {
                    List<String> calls = rank.device().calls().subList(mark.get(), rank.device().calls().size());
                    assertThat(calls).as("the remap maps pooled handles").doesNotContain("create", "release").contains("map");
                    assertThat(rank.sim().handlesAlive()).isEqualTo(8);
                    assertThat(rank.sim().mappings()).hasSize(8).allSatisfy(m -> assertThat(m.accessible()).isTrue());
                    return rank.send(WorkerAction.STATS, new JsonObject());
                })
                .onComplete(test.succeeding(stats -> test.verify(() -> {
                    assertThat(stats.getInteger("pooledHandles")).isZero();
                    assertThat(stats.getJsonArray("handlePools")).isEqualTo(new JsonArray().add(new JsonObject()
                            .put("handleBytes", PAGE_BYTES).put("idle", 0).put("bound", 16).put("lent", 8)
                            .put("creates", 8L).put("reuses", 8L).put("releases", 0L)));
                    test.completeNow();
                })));
    }

    @Test
    void groupsOfOneHandleSizeShareThePool(Vertx vertx, VertxTestContext test) {
        SimRank rank = new SimRank(vertx);
        AtomicReference<Integer> mark = new AtomicReference<>();
        rank.deploy()
                .compose(id -> rank.send(WorkerAction.CREATE_TENSORS, tensors(1, Layout.PER_LAYER, 8)))
                .compose(created -> rank.send(WorkerAction.CREATE_TENSORS, tensors(2, Layout.PER_LAYER, 8)))
                .compose(created -> rank.send(WorkerAction.MAP, pages(1, "m1", 3)))
                .compose(mapped -> rank.send(WorkerAction.UNMAP, pages(1, "u1", 3)))
                .compose(unmapped -> {
                    mark.set(rank.device().calls().size());
                    return rank.send(WorkerAction.MAP, pages(2, "m2", 6));
                })
                .onComplete(test.succeeding(mapped -> test.verify(() -> {
                    assertThat(rank.callsSince(mark.get(), "create")).as("group 2 maps group 1's old handles").isZero();
                    assertThat(rank.sim().handlesAlive()).isEqualTo(4);
                    test.completeNow();
                })));
    }

    @Test
    void handlesBeyondTheBoundAreReleasedOnUnmap(Vertx vertx, VertxTestContext test) {
        SimRank rank = new SimRank(vertx);
        AtomicReference<Integer> mark = new AtomicReference<>();
        rank.deploy()
                .compose(id -> rank.send(WorkerAction.CREATE_TENSORS, tensors(1, Layout.PER_LAYER, 8)
                        .put("handlePool", new JsonObject().put("boundPages", 1))))
                // PAGE_MAJOR keeps none by default
                .compose(created -> rank.send(WorkerAction.CREATE_TENSORS, tensors(2, Layout.PAGE_MAJOR, 8)))
                .compose(created -> rank.send(WorkerAction.MAP, pages(1, "m1", 0, 1, 2)))
                .compose(mapped -> rank.send(WorkerAction.MAP, pages(2, "m2", 0, 1)))
                .compose(mapped -> {
                    mark.set(rank.device().calls().size());
                    return Future.all(rank.send(WorkerAction.UNMAP, pages(1, "u1", 0, 1, 2)),
                            rank.send(WorkerAction.UNMAP, pages(2, "u2", 1, 0)));
                })
                .compose(unmapped -> {
                    assertThat(rank.callsSince(mark.get(), "release")).isEqualTo(8 + 2);
                    assertThat(rank.sim().handlesAlive()).as("one page id's worth stays, 2 MiB handles only").isEqualTo(4);
                    assertThat(rank.sim().bytesInUse()).isEqualTo(4 * PAGE_BYTES);
                    return rank.send(WorkerAction.STATS, new JsonObject());
                })
                .onComplete(test.succeeding(stats -> test.verify(() -> {
                    assertThat(stats.getInteger("pooledHandles")).isEqualTo(4);
                    assertThat(stats.getLong("pooledBytes")).isEqualTo(4 * PAGE_BYTES);
                    assertThat(stats.getJsonObject("groups").getJsonObject("1").getJsonObject("handlePool"))
                            .isEqualTo(new JsonObject().put("prefillPages", 0).put("boundPages", 1).put("idlePages", 0));
                    assertThat(stats.getJsonObject("groups").getJsonObject("2").getJsonObject("handlePool"))
                            .isEqualTo(new JsonObject().put("prefillPages", 0).put("boundPages", 0).put("idlePages", 0));
                    test.completeNow();
                })));
    }

    @Test
    void outOfMemoryWhileTakingIs507AndTheDeviceHoldsWhatItHeld(Vertx vertx, VertxTestContext test) {
        // room for three page ids of four 2 MiB handles
        SimRank rank = new SimRank(vertx, new JsonObject().put("capacityBytes", 12 * PAGE_BYTES));
        AtomicReference<SimRank.DeviceState> before = new AtomicReference<>();
        AtomicReference<Integer> mark = new AtomicReference<>();
        rank.deploy()
                .compose(id -> rank.send(WorkerAction.CREATE_TENSORS, tensors(1, Layout.PER_LAYER, 8)))
                .compose(created -> rank.send(WorkerAction.MAP, pages(1, "m1", 0, 1)))
                .compose(mapped -> rank.send(WorkerAction.UNMAP, pages(1, "u1", 0)))
                .compose(unmapped -> {
                    // page 1 mapped, page 0's four handles idle; page 2 takes them, page 3 creates
                    // the last four that fit, page 4 runs out
                    before.set(rank.state());
                    return rank.fails(WorkerAction.MAP, pages(1, "m2", 2, 3, 4));
                })
                .compose(failure -> {
                    assertThat(failure.failureCode()).isEqualTo(507);
                    assertThat(failure.getMessage()).startsWith("pp0/tp1 group 1 page 4: cuMemCreate failed: CUDA_ERROR_OUT_OF_MEMORY");
                    assertThat(rank.state()).isEqualTo(before.get());
                    return rank.send(WorkerAction.STATS, new JsonObject());
                })
                .compose(stats -> {
                    assertThat(stats.getInteger("pooledHandles")).as("the handles taken are idle again").isEqualTo(4);
                    assertThat(stats.getInteger("handlesAlive")).isEqualTo(8);
                    assertThat(stats.getJsonObject("groups").getJsonObject("1").getInteger("mappedPages")).isEqualTo(1);
                    mark.set(rank.device().calls().size());
                    return rank.send(WorkerAction.MAP, pages(1, "m3", 2));
                })
                .onComplete(test.succeeding(mapped -> test.verify(() -> {
                    assertThat(rank.callsSince(mark.get(), "create")).isZero();
                    assertThat(rank.sim().handlesAlive()).isEqualTo(8);
                    assertThat(rank.sim().mappings()).hasSize(8);
                    test.completeNow();
                })));
    }

    @Test
    void prefillMakesTheFirstMapCreateNothing(Vertx vertx, VertxTestContext test) {
        SimRank rank = new SimRank(vertx);
        AtomicReference<Integer> mark = new AtomicReference<>();
        rank.deploy()
                .compose(id -> rank.send(WorkerAction.CREATE_TENSORS, tensors(1, Layout.PER_LAYER, 8)
                        .put("handlePool", new JsonObject().put("prefillPages", 2).put("boundPages", 3))))
                .compose(created -> {
                    assertThat(rank.sim().handlesAlive()).isEqualTo(8);
                    assertThat(rank.sim().mappings()).isEmpty();
                    mark.set(rank.device().calls().size());
                    // the same request again changes nothing: no second prefill
                    return rank.send(WorkerAction.CREATE_TENSORS, tensors(1, Layout.PER_LAYER, 8)
                            .put("handlePool", new JsonObject().put("prefillPages", 2).put("boundPages", 3)));
                })
                .compose(again -> {
                    assertThat(rank.sim().handlesAlive()).isEqualTo(8);
                    return rank.send(WorkerAction.MAP, pages(1, "m", 4, 5));
                })
                .onComplete(test.succeeding(mapped -> test.verify(() -> {
                    assertThat(rank.callsSince(mark.get(), "create")).isZero();
                    assertThat(rank.sim().handlesAlive()).isEqualTo(8);
                    assertThat(rank.sim().mappings()).hasSize(8);
                    test.completeNow();
                })));
    }

    @Test
    void otherPoolOptionsForAnExistingGroupAre409(Vertx vertx, VertxTestContext test) {
        SimRank rank = new SimRank(vertx);
        rank.deploy()
                .compose(id -> rank.send(WorkerAction.CREATE_TENSORS, tensors(1, Layout.PER_LAYER, 8)))
                .compose(created -> rank.fails(WorkerAction.CREATE_TENSORS, tensors(1, Layout.PER_LAYER, 8)
                        .put("handlePool", new JsonObject().put("boundPages", 2))))
                .onComplete(test.succeeding(failure -> test.verify(() -> {
                    assertThat(failure.failureCode()).isEqualTo(409);
                    assertThat(failure.getMessage()).contains("handlePool {\"prefillPages\":0,\"boundPages\":4}; destroy-tensors first");
                    test.completeNow();
                })));
    }

    @Test
    void outOfMemoryWhilePrefillingIs507AndLeavesNothing(Vertx vertx, VertxTestContext test) {
        SimRank rank = new SimRank(vertx, new JsonObject().put("capacityBytes", 12 * PAGE_BYTES));
        AtomicReference<SimRank.DeviceState> before = new AtomicReference<>();
        rank.deploy()
                .compose(id -> rank.send(WorkerAction.CREATE_TENSORS, tensors(1, Layout.PER_LAYER, 8)))
                .compose(created -> rank.send(WorkerAction.MAP, pages(1, "m", 0)))
                .compose(mapped -> rank.send(WorkerAction.UNMAP, pages(1, "u", 0)))
                .compose(unmapped -> {
                    before.set(rank.state());
                    // eight 2 MiB handles fit beside group 1's four idle ones; group 2's zero page and prefill need nine
                    return rank.fails(WorkerAction.CREATE_TENSORS, tensors(2, Layout.PER_LAYER, 8).put("zeroPage", true)
                            .put("handlePool", new JsonObject().put("prefillPages", 2).put("boundPages", 2)));
                })
                .compose(failure -> {
                    assertThat(failure.failureCode()).isEqualTo(507);
                    assertThat(failure.getMessage()).startsWith("pp0/tp1 group 2: prefilling the handle pool: cuMemCreate failed: "
                            + "CUDA_ERROR_OUT_OF_MEMORY");
                    assertThat(rank.state()).isEqualTo(before.get());
                    return rank.send(WorkerAction.STATS, new JsonObject());
                })
                .compose(stats -> {
                    assertThat(stats.getInteger("pooledHandles")).isEqualTo(4);
                    assertThat(stats.getJsonArray("handlePools").getJsonObject(0).getInteger("bound")).as("group 1's only").isEqualTo(16);
                    return rank.send(WorkerAction.TENSORS_CREATED, group(2));
                })
                .onComplete(test.succeeding(reply -> test.verify(() -> {
                    assertThat(reply.getBoolean("created")).isFalse();
                    test.completeNow();
                })));
    }

    @Test
    void destroyTensorsReleasesThePooledHandlesNoOtherGroupKeeps(Vertx vertx, VertxTestContext test) {
        SimRank rank = new SimRank(vertx);
        rank.deploy()
                .compose(id -> rank.send(WorkerAction.CREATE_TENSORS, tensors(1, Layout.PER_LAYER, 8)
                        .put("handlePool", new JsonObject().put("prefillPages", 1).put("boundPages", 3))))
                .compose(created -> rank.send(WorkerAction.CREATE_TENSORS, tensors(2, Layout.PER_LAYER, 8)
                        .put("handlePool", new JsonObject().put("boundPages", 1))))
                .compose(created -> rank.send(WorkerAction.MAP, pages(1, "m1", 0, 1, 2, 3)))
                .compose(mapped -> rank.send(WorkerAction.UNMAP, pages(1, "u1", 0, 1)))
                .compose(unmapped -> {
                    assertThat(rank.sim().handlesAlive()).isEqualTo(16);
                    return rank.send(WorkerAction.DESTROY_TENSORS, group(1));
                })
                .compose(destroyed -> {
                    assertThat(rank.sim().handlesAlive()).as("group 2's bound of one page id stays idle").isEqualTo(4);
                    assertThat(rank.sim().mappings()).isEmpty();
                    return rank.send(WorkerAction.DESTROY_TENSORS, group(2));
                })
                .compose(destroyed -> {
                    assertThat(rank.state()).isEqualTo(NOTHING);
                    return rank.send(WorkerAction.STATS, new JsonObject());
                })
                .onComplete(test.succeeding(stats -> test.verify(() -> {
                    assertThat(stats.getInteger("pooledHandles")).isZero();
                    assertThat(stats.getLong("pooledBytes")).isZero();
                    assertThat(stats.getLong("deviceUsedBytes")).isZero();
                    assertThat(stats.getJsonArray("handlePools")).isEmpty();
                    test.completeNow();
                })));
    }

    @Test
    void stopReleasesPooledHandlesBeforeClosingTheDevice(Vertx vertx, VertxTestContext test) {
        SimRank rank = new SimRank(vertx);
        AtomicReference<SimRank.DeviceState> atClose = new AtomicReference<>();
        rank.deploy()
                .compose(id -> rank.send(WorkerAction.CREATE_TENSORS, tensors(1, Layout.PER_LAYER, 8)
                        .put("handlePool", new JsonObject().put("prefillPages", 2).put("boundPages", 4))))
                .compose(created -> rank.send(WorkerAction.CREATE_TENSORS, tensors(2, Layout.PAGE_MAJOR, 8)
                        .put("handlePool", new JsonObject().put("prefillPages", 1).put("boundPages", 1))))
                .compose(created -> rank.send(WorkerAction.MAP, pages(1, "m", 6)))
                .compose(mapped -> {
                    assertThat(rank.sim().handlesAlive()).isEqualTo(8 + 1);
                    rank.device().beforeCall(call -> {
                        if (call.equals("close")) {
                            atClose.set(rank.state());
                        }
                    });
                    return vertx.undeploy(rank.deploymentId());
                })
                .onComplete(test.succeeding(v -> test.verify(() -> {
                    assertThat(atClose.get()).as("what the worker left for close() to clean up").isEqualTo(NOTHING);
                    assertThat(rank.sim().isClosed()).isTrue();
                    test.completeNow();
                })));
    }

    /** Calls named {@code name} since call number {@code from}. */
}
