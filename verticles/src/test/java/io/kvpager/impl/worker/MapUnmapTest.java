package io.kvpager.impl.worker;

import io.kvpager.Layout;
import io.kvpager.protocol.TensorView;
import io.kvpager.protocol.WorkerAction;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import io.vertx.junit5.VertxExtension;
import io.vertx.junit5.VertxTestContext;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

import java.util.Arrays;
import java.util.List;

import static io.kvpager.impl.worker.SimRank.PAGE_BYTES;
import static io.kvpager.impl.worker.SimRank.group;
import static io.kvpager.impl.worker.SimRank.pages;
import static io.kvpager.impl.worker.SimRank.tensors;
import static org.assertj.core.api.Assertions.assertThat;

/** The success paths of both layouts on the sim device, with the device's own accounting checked. */
@ExtendWith(VertxExtension.class)
class MapUnmapTest {

    /** 2 layers × 2 buffers of 2 MiB: PAGE_MAJOR maps one 8 MiB handle per page, PER_LAYER four 2 MiB ones. */
    private static final long BYTES_PER_PAGE_ID = 4 * PAGE_BYTES;

    @ParameterizedTest
    @EnumSource(Layout.class)
    void mapsAndUnmapsPagesWithTheirHandles(Layout layout, Vertx vertx, VertxTestContext test) {
        SimRank rank = new SimRank(vertx);
        int handlesPerPage = layout == Layout.PAGE_MAJOR ? 1 : 4;
        // PER_LAYER keeps up to 4 page ids of unmapped handles idle by default, PAGE_MAJOR none
        int pooledAfterUnmap = layout == Layout.PAGE_MAJOR ? 0 : 2 * handlesPerPage;
        rank.deploy()
                .compose(id -> rank.send(WorkerAction.TENSORS_CREATED, group(7)))
                .compose(reply -> {
                    assertThat(reply.getBoolean("created")).isFalse();
                    return rank.send(WorkerAction.CREATE_TENSORS, tensors(7, layout, 16));
                })
                .compose(reply -> {
                    // the GPU's name and size, and what the group may hold besides its pages: its idle handles' bound
                    assertThat(reply).isEqualTo(new JsonObject().put("created", true).put("group", 7).put("granularity", PAGE_BYTES)
                            .put("gpu", GpuId.of(rank.config()).toString()).put("gpuBytes", 141L << 30)
                            .put("standingBytes", pooledBound(layout) * PAGE_BYTES));
                    assertThat(reply.getString("gpu")).startsWith("sim:" + rank.config().sim().getString("gpuKey") + ":0@");
                    assertThat(rank.sim().reservations()).hasSize(layout == Layout.PAGE_MAJOR ? 1 : 4)
                            .allSatisfy(r -> assertThat(r.size()).isEqualTo(16 * (layout == Layout.PAGE_MAJOR ? BYTES_PER_PAGE_ID : PAGE_BYTES)));
                    assertThat(rank.sim().handlesAlive()).isZero();
                    return rank.send(WorkerAction.TENSORS_CREATED, group(7));
                })
                .compose(reply -> {
                    assertThat(reply.getBoolean("created")).isTrue();
                    return rank.send(WorkerAction.MAP, pages(7, "m1", 3, 0, 15));
                })
                .compose(reply -> {
                    assertThat(reply.getJsonArray("mapped")).isEqualTo(new JsonArray().add(3).add(0).add(15));
                    assertThat(rank.sim().handlesAlive()).isEqualTo(3 * handlesPerPage);
                    assertThat(rank.sim().bytesInUse()).isEqualTo(3 * BYTES_PER_PAGE_ID);
                    assertThat(rank.sim().mappings()).hasSize(3 * handlesPerPage).allSatisfy(m -> assertThat(m.accessible()).isTrue());
                    return rank.send(WorkerAction.STATS, new JsonObject());
                })
                .compose(stats -> {
                    assertThat(stats.getString("rank")).isEqualTo("pp0/tp1");
                    assertThat(stats.getString("device")).startsWith("sim:");
                    assertThat(stats.getInteger("handlesAlive")).isEqualTo(3 * handlesPerPage);
                    JsonObject group = stats.getJsonObject("groups").getJsonObject("7");
                    assertThat(group.getInteger("mappedPages")).isEqualTo(3);
                    assertThat(group.getInteger("handles")).isEqualTo(3 * handlesPerPage);
                    assertThat(stats.getLong("deviceTotalBytes")).isEqualTo(141L << 30);
                    assertThat(stats.getLong("deviceUsedBytes")).isEqualTo(3 * BYTES_PER_PAGE_ID);
                    assertThat(stats.getLong("deviceFreeBytes")).isEqualTo((141L << 30) - 3 * BYTES_PER_PAGE_ID);
                    return rank.send(WorkerAction.UNMAP, pages(7, "u1", 0, 3));
                })
                .compose(reply -> {
                    assertThat(reply.getJsonArray("unmapped")).isEqualTo(new JsonArray().add(0).add(3));
                    assertThat(rank.sim().handlesAlive()).isEqualTo(handlesPerPage + pooledAfterUnmap);
                    assertThat(rank.sim().bytesInUse()).isEqualTo(BYTES_PER_PAGE_ID + pooledAfterUnmap * PAGE_BYTES);
                    assertThat(rank.sim().mappings()).hasSize(handlesPerPage);
                    assertThat(rank.sim().pendingReleases()).isZero();
                    return rank.send(WorkerAction.STATS, new JsonObject());
                })
                .compose(stats -> {
                    assertThat(stats.getInteger("pooledHandles")).isEqualTo(pooledAfterUnmap);
                    assertThat(stats.getLong("pooledBytes")).isEqualTo(pooledAfterUnmap * PAGE_BYTES);
                    assertThat(stats.getInteger("handlesAlive")).isEqualTo(rank.sim().handlesAlive());
                    assertThat(stats.getJsonObject("groups").getJsonObject("7").getInteger("handles")).isEqualTo(handlesPerPage);
                    return rank.send(WorkerAction.DESTROY_TENSORS, group(7));
                })
                .compose(reply -> {
                    assertThat(reply.getBoolean("destroyed")).isTrue();
                    assertThat(rank.state()).isEqualTo(new SimRank.DeviceState(0, 0, List.of(), List.of()));
                    return rank.send(WorkerAction.DESTROY_TENSORS, group(7));
                })
                .compose(reply -> {
                    assertThat(reply.getBoolean("destroyed")).isFalse();
                    return rank.send(WorkerAction.TENSORS_CREATED, group(7));
                })
                .onComplete(test.succeeding(reply -> test.verify(() -> {
                    assertThat(reply.getBoolean("created")).isFalse();
                    test.completeNow();
                })));
    }

    @Test
    void createTensorsAgainWithTheSameGeometryIsIdempotent(Vertx vertx, VertxTestContext test) {
        SimRank rank = new SimRank(vertx);
        rank.deploy()
                .compose(id -> rank.send(WorkerAction.CREATE_TENSORS, tensors(1, Layout.PAGE_MAJOR, 8)))
                .compose(first -> rank.send(WorkerAction.CREATE_TENSORS, tensors(1, Layout.PAGE_MAJOR, 8))
                        .map(second -> {
                            assertThat(second).isEqualTo(first);
                            assertThat(rank.sim().reservations()).hasSize(1);
                            return second;
                        }))
                .onComplete(test.succeedingThenComplete());
    }

    @Test
    void viewsOfPageMajorInterleaveBlocksAcrossLayers(Vertx vertx, VertxTestContext test) {
        SimRank rank = new SimRank(vertx);
        rank.deploy()
                .compose(id -> rank.send(WorkerAction.CREATE_TENSORS, tensors(2, Layout.PAGE_MAJOR, 8)))
                .compose(created -> rank.send(WorkerAction.VIEWS, group(2)))
                .onComplete(test.succeeding(reply -> test.verify(() -> {
                    long base = rank.sim().reservations().getFirst().address();
                    long block = 512 << 10;
                    assertThat(views(reply)).containsExactly(
                            new TensorView(0, 0, base, 4 * block, 32, 4, BYTES_PER_PAGE_ID),
                            new TensorView(0, 1, base + block, 4 * block, 32, 4, BYTES_PER_PAGE_ID),
                            new TensorView(1, 0, base + 2 * block, 4 * block, 32, 4, BYTES_PER_PAGE_ID),
                            new TensorView(1, 1, base + 3 * block, 4 * block, 32, 4, BYTES_PER_PAGE_ID));
                    // block 5 of layer 1, buffer 0: page 1, second block of that page
                    assertThat(views(reply)[2].blockAddress(5)).isEqualTo(base + BYTES_PER_PAGE_ID + 4 * block + 2 * block);
                    test.completeNow();
                })));
    }

    @Test
    void viewsOfPerLayerAreOneDenseTensorEach(Vertx vertx, VertxTestContext test) {
        SimRank rank = new SimRank(vertx);
        rank.deploy()
                .compose(id -> rank.send(WorkerAction.CREATE_TENSORS, tensors(2, Layout.PER_LAYER, 8)))
                .compose(created -> rank.send(WorkerAction.VIEWS, group(2)))
                .onComplete(test.succeeding(reply -> test.verify(() -> {
                    long[] bases = rank.sim().reservations().stream().mapToLong(r -> r.address()).sorted().toArray();
                    long block = 512 << 10;
                    TensorView[] views = views(reply);
                    assertThat(views).hasSize(4);
                    assertThat(Arrays.stream(views).mapToLong(TensorView::address).sorted().toArray()).isEqualTo(bases);
                    for (TensorView view : views) {
                        assertThat(view.blockStride()).isEqualTo(block);
                        assertThat(view.pageStride()).isEqualTo(PAGE_BYTES);
                        assertThat(view.blockCount()).isEqualTo(32);
                        assertThat(view.blocksPerPage()).isEqualTo(4);
                        assertThat(view.blockAddress(5)).isEqualTo(view.address() + 5 * block);
                    }
                    test.completeNow();
                })));
    }

    @Test
    void blocksWrittenThroughViewsLandInTheirPagesHandles(Vertx vertx, VertxTestContext test) {
        SimRank rank = new SimRank(vertx);
        rank.deploy()
                .compose(id -> rank.send(WorkerAction.CREATE_TENSORS, tensors(3, Layout.PAGE_MAJOR, 8)))
                .compose(created -> rank.send(WorkerAction.MAP, pages(3, "m", 1)))
                .compose(mapped -> rank.send(WorkerAction.VIEWS, group(3)))
                .compose(reply -> {
                    TensorView[] views = views(reply);
                    // every view's blocks 4..7 (page 1) are distinct, in-page addresses
                    return rank.onRankThread(() -> {
                        for (TensorView view : views) {
                            for (int b = 4; b < 8; b++) {
                                rank.sim().write(view.blockAddress(b), new byte[] {(byte) (view.layer() * 16 + view.buffer() * 8 + b)});
                            }
                        }
                        byte[] seen = new byte[views.length * 4];
                        int i = 0;
                        for (TensorView view : views) {
                            for (int b = 4; b < 8; b++) {
                                seen[i++] = rank.sim().read(view.blockAddress(b), 1)[0];
                            }
                        }
                        return seen;
                    });
                })
                .onComplete(test.succeeding(seen -> test.verify(() -> {
                    assertThat(seen).containsExactly(4, 5, 6, 7, 12, 13, 14, 15, 20, 21, 22, 23, 28, 29, 30, 31);
                    test.completeNow();
                })));
    }

    @ParameterizedTest
    @EnumSource(Layout.class)
    void zeroPageBacksEveryUnmappedPage(Layout layout, Vertx vertx, VertxTestContext test) {
        SimRank rank = new SimRank(vertx);
        int slots = layout == Layout.PAGE_MAJOR ? 1 : 4;
        long slotBytes = layout == Layout.PAGE_MAJOR ? BYTES_PER_PAGE_ID : PAGE_BYTES;
        rank.deploy()
                .compose(id -> rank.send(WorkerAction.CREATE_TENSORS, tensors(4, layout, 8).put("zeroPage", true)))
                .compose(created -> {
                    assertThat(rank.sim().handlesAlive()).isEqualTo(1);
                    assertThat(rank.sim().bytesInUse()).isEqualTo(slotBytes);
                    assertThat(rank.sim().mappings()).hasSize(8 * slots).allSatisfy(m -> assertThat(m.accessible()).isTrue());
                    assertThat(rank.sim().mappings().stream().map(m -> m.handle()).distinct()).hasSize(1);
                    return rank.send(WorkerAction.MAP, pages(4, "m", 2));
                })
                .compose(mapped -> {
                    assertThat(rank.sim().handlesAlive()).isEqualTo(1 + slots);
                    assertThat(rank.sim().mappings()).hasSize(8 * slots);
                    return rank.send(WorkerAction.VIEWS, group(4));
                })
                .compose(reply -> {
                    TensorView view = views(reply)[0];
                    long page2 = view.blockAddress(8);
                    long page3 = view.blockAddress(12);
                    return rank.onRankThread(() -> {
                        rank.sim().write(page2, new byte[] {9, 9, 9});
                        return new byte[][] {rank.sim().read(page2, 3), rank.sim().read(page3, 3)};
                    }).compose(read -> {
                        assertThat(read[0]).containsExactly(9, 9, 9);
                        assertThat(read[1]).as("an unmapped page reads the zero page, untouched by writes to a mapped one")
                                .containsExactly(0, 0, 0);
                        return rank.send(WorkerAction.UNMAP, pages(4, "u", 2));
                    }).compose(unmapped -> rank.onRankThread(() -> rank.sim().read(page2, 3)));
                })
                .compose(read -> {
                    assertThat(read).as("an unmapped page reads zeros again").containsExactly(0, 0, 0);
                    // PER_LAYER keeps the page's handles idle for the next map
                    assertThat(rank.sim().handlesAlive()).isEqualTo(1 + (layout == Layout.PER_LAYER ? slots : 0));
                    assertThat(rank.sim().mappings()).hasSize(8 * slots);
                    return rank.send(WorkerAction.STATS, new JsonObject());
                })
                .compose(stats -> {
                    assertThat(stats.getJsonObject("groups").getJsonObject("4").getInteger("handles")).isEqualTo(1);
                    assertThat(stats.getJsonObject("groups").getJsonObject("4").getInteger("mappedPages")).isZero();
                    return rank.send(WorkerAction.DESTROY_TENSORS, group(4));
                })
                .onComplete(test.succeeding(destroyed -> test.verify(() -> {
                    assertThat(rank.state()).isEqualTo(new SimRank.DeviceState(0, 0, List.of(), List.of()));
                    test.completeNow();
                })));
    }

    @Test
    void zeroPageReadsZerosEvenWhenNewMemoryIsDirty(Vertx vertx, VertxTestContext test) {
        SimRank rank = new SimRank(vertx);
        rank.deploy()
                .compose(id -> {
                    rank.device().dirtyNewMemory();
                    return rank.send(WorkerAction.CREATE_TENSORS, tensors(5, Layout.PER_LAYER, 4).put("zeroPage", true));
                })
                .compose(created -> rank.send(WorkerAction.VIEWS, group(5)))
                .compose(reply -> {
                    TensorView[] views = views(reply);
                    return rank.onRankThread(() -> {
                        byte[][] reads = new byte[views.length][];
                        for (int v = 0; v < views.length; v++) {
                            reads[v] = rank.sim().read(views[v].blockAddress(15), 64);
                        }
                        return reads;
                    });
                })
                .onComplete(test.succeeding(reads -> test.verify(() -> {
                    for (byte[] read : reads) {
                        assertThat(read).containsOnly(0);
                    }
                    test.completeNow();
                })));
    }

    private static TensorView[] views(JsonObject reply) {
        return reply.getJsonArray("views").stream().map(v -> TensorView.fromJson((JsonObject) v)).toArray(TensorView[]::new);
    }

    /** Handles a group keeps idle at most by default: 4 page ids of 4 handles for PER_LAYER, none for PAGE_MAJOR. */
    private static long pooledBound(Layout layout) {
        return layout == Layout.PAGE_MAJOR ? 0 : 4 * 4;
    }
}
