package io.kvpager.harness.gpu;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.kvpager.Allocation;
import io.kvpager.Layout;
import io.kvpager.cache.CacheStats;
import io.kvpager.cache.KvCache;
import io.kvpager.cache.KvCacheOptions;
import io.kvpager.cache.RankStats;
import io.kvpager.cuda.DeviceMemory;
import io.kvpager.spi.DeviceFactory;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.eventbus.DeliveryOptions;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * A TP=4 cache on GPU 0 (every rank holds its own tensors there), driven through the coordinator:
 * allocations map pages on all four ranks, data written through each rank's {@code views} is read
 * back, the bytes land exactly in the page the block names, and freeing plus trimming gives the
 * memory back to the driver.
 */
@Tag("gpu")
class CacheOnGpuTest {

    private static final int TP = 4;
    private static final int LAYERS = 4;
    private static final int KV_BUFFERS = 2;
    private static final long BLOCK_BYTES = 64 << 10;
    private static final long PAGE_BYTES = 2 << 20;
    private static final int BLOCKS_PER_PAGE = (int) (PAGE_BYTES / BLOCK_BYTES);

    private static Vertx vertx;
    private static DeviceMemory memory;

    private static final Optional<String> NO_GPU = DeviceFactory.forKind("cuda").unavailableReason();

    @BeforeAll
    static void openGpu() {
        if (NO_GPU.isEmpty()) {
            vertx = Vertx.vertx();
            memory = DeviceMemory.open(0);
        }
    }

    /** Each test is reported as skipped, with the reason, where there is no GPU. */
    @BeforeEach
    void needsGpu() {
        assumeTrue(NO_GPU.isEmpty(), () -> "skipped, no CUDA device to test on: " + NO_GPU.orElseThrow());
    }

    @AfterAll
    static void done() {
        if (memory != null) {
            memory.close();
        }
        if (vertx != null) {
            await(vertx.close());
        }
    }

    private static KvCacheOptions options(String instance, Layout layout) {
        Map<String, Integer> gpus = new LinkedHashMap<>();
        for (int r = 0; r < TP; r++) {
            gpus.put("pp0/tp" + r, 0);
        }
        return new KvCacheOptions().setInstance(instance).setTp(TP).setLayers(LAYERS).setKvBuffers(KV_BUFFERS)
                .setBlockBytes(BLOCK_BYTES).setPageBytes(PAGE_BYTES).setPages(64).setLayout(layout)
                .setReserveLow(0).setReserveHigh(0).setAdaptiveReserve(false)
                .setLocalWorkers(true).setDevice("cuda").setGpus(gpus);
    }

    @ParameterizedTest
    @EnumSource(Layout.class)
    void blocksWrittenThroughViewsLandInTheirPageOnEveryRank(Layout layout) {
        String instance = "gpu-views-" + layout.name().toLowerCase();
        long freeBefore = freeBytes();
        KvCache cache = await(KvCache.deploy(vertx, options(instance, layout)));
        try {
            Allocation first = await(cache.alloc(BLOCKS_PER_PAGE * 3));
            Allocation second = await(cache.alloc(5));
            assertThat(first.isMiss()).as(first.toString()).isFalse();
            assertThat(second.isMiss()).as(second.toString()).isFalse();
            CacheStats stats = await(cache.stats());
            assertThat(stats.pool().mappedPages()).isEqualTo(4);
            for (RankStats rank : stats.ranks()) {
                assertThat(rank.mappedPages()).as(rank.rank()).isEqualTo(4);
            }
            int block = second.block(2);
            for (int r = 0; r < TP; r++) {
                JsonArray views = views(instance, r);
                assertThat(views).hasSize(LAYERS * KV_BUFFERS);
                checkBlockLandsInItsPage(views, block, (byte) (0x10 * (r + 1)));
            }

            await(cache.free(first));
            await(cache.free(second));
            await(cache.trim());
            assertThat(await(cache.stats()).pool().mappedPages()).isZero();
        } finally {
            await(cache.close());
        }
        assertThat(freeBytes()).as("device memory back after close").isEqualTo(freeBefore);
    }

    /**
     * Zeroes the whole page id that holds {@code block} in every view, writes a distinct pattern
     * through each view at the block's address, and reads every view's page back: each pattern
     * must be exactly where its view says and every other byte still zero.
     */
    private static void checkBlockLandsInItsPage(JsonArray views, int block, byte base) {
        int page = block / BLOCKS_PER_PAGE;
        for (int v = 0; v < views.size(); v++) {
            JsonObject view = views.getJsonObject(v);
            memory.fill(pageStart(view, page), pageSpan(view), (byte) 0);
        }
        for (int v = 0; v < views.size(); v++) {
            byte[] pattern = new byte[(int) BLOCK_BYTES];
            Arrays.fill(pattern, (byte) (base + v + 1));
            memory.write(address(views.getJsonObject(v), block), pattern);
        }
        memory.synchronize();
        for (int v = 0; v < views.size(); v++) {
            JsonObject view = views.getJsonObject(v);
            long start = pageStart(view, page);
            byte[] bytes = memory.read(start, (int) pageSpan(view));
            long at = address(view, block) - start;
            for (int i = 0; i < bytes.length; i++) {
                boolean inBlock = i >= at && i < at + BLOCK_BYTES;
                byte expected = inBlock ? (byte) (base + v + 1)
                        : bytes[i] == 0 ? 0 : expectedOutside(views, start, i, block, base);
                if (bytes[i] != expected) {
                    throw new AssertionError("view " + view.encode() + ": byte " + i + " of page " + page + " is "
                            + bytes[i] + ", expected " + expected);
                }
            }
        }
    }

    /** Outside its own block a view's page span holds zeros, or another view's block (PAGE_MAJOR interleaves them). */
    private static byte expectedOutside(JsonArray views, long start, int offset, int block, byte base) {
        long absolute = start + offset;
        for (int v = 0; v < views.size(); v++) {
            long other = address(views.getJsonObject(v), block);
            if (absolute >= other && absolute < other + BLOCK_BYTES) {
                return (byte) (base + v + 1);
            }
        }
        return 0;
    }

    private static long address(JsonObject view, int block) {
        int perPage = view.getInteger("blocksPerPage");
        return view.getLong("address") + (long) (block / perPage) * view.getLong("pageStride")
                + (long) (block % perPage) * view.getLong("blockStride");
    }

    /** The first byte of {@code page} as this view sees it: its block 0 of that page. */
    private static long pageStart(JsonObject view, int page) {
        return address(view, page * view.getInteger("blocksPerPage"));
    }

    /** Bytes from a view's first block of a page to the end of its last block there. */
    private static long pageSpan(JsonObject view) {
        return (view.getInteger("blocksPerPage") - 1) * view.getLong("blockStride") + BLOCK_BYTES;
    }

    private static JsonArray views(String instance, int tp) {
        return await(vertx.eventBus().<JsonObject>request("kvpager." + instance + ".pp0.tp" + tp,
                new JsonObject().put("group", 0), new DeliveryOptions().addHeader("action", "views")))
                .body().getJsonArray("views");
    }

    private static long freeBytes() {
        try (var device = DeviceFactory.forKind("cuda").open(0, "probe", java.util.Map.of())) {
            device.attach();
            return device.memoryInfo().freeBytes();
        }
    }

    static <T> T await(Future<T> future) {
        try {
            return future.toCompletionStage().toCompletableFuture().get(60, TimeUnit.SECONDS);
        } catch (java.util.concurrent.ExecutionException e) {
            throw e.getCause() instanceof RuntimeException r ? r : new IllegalStateException(e.getCause());
        } catch (Exception e) {
            throw new IllegalStateException("gave up waiting: " + e, e);
        }
    }
}
