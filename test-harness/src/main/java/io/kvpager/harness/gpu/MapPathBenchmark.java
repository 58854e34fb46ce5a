package io.kvpager.harness.gpu;

import io.kvpager.Allocation;
import io.kvpager.Geometry;
import io.kvpager.Layout;
import io.kvpager.cache.KvCache;
import io.kvpager.cache.KvCacheOptions;
import io.kvpager.cache.PoolStats;
import io.kvpager.cuda.RawPageLoop;
import io.kvpager.device.HandlePoolOptions;
import io.kvpager.sim.SimOptions;
import io.vertx.core.Context;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.internal.VertxInternal;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Supplier;

/**
 * kvpager's map and unmap path (alloc through the coordinator, fanned out to every rank's worker
 * on GPU 0; the free that unmaps the pages it empties) beside the raw driver loop doing the same
 * work on one thread ({@link RawPageLoop}) and the event-bus floor ({@link BusFloor}), in
 * alternating rounds ({@link AlternatingRounds}), for each layout, TP size and batch size.
 *
 * <p>{@code PAGE_MAJOR} at TP=1 (batches up to 16) is timed in more ways in the same rounds: the
 * engine on the cache's own context, a cache whose rank keeps its unmapped handles from the start
 * ({@code handlePool.boundPages}), a cache that keeps none while its pages churn
 * ({@code idleHandlePages} 0, the default before idle handles), the bus floor asked from an event
 * loop of its own through another one (what a caller off the coordinator's event loop pays in
 * hand-offs alone), and the driver loop on a rank's thread behind one event-bus hop
 * ({@link RankThreadFloor}), which shows what a design with a rank thread costs at best.
 *
 * <p>One block per page id, so {@code alloc(n)} maps exactly {@code n} new page ids in one batch;
 * the reserve is off, so every alloc maps and every free unmaps, which each row checks in the
 * cache's counters at its end.
 */
final class MapPathBenchmark implements GpuSection {

    static final int LAYERS = 16;
    static final int KV_BUFFERS = 2;
    static final long PAGE_BYTES = 2L << 20;
    static final int PAGES = 256;

    @Override
    public String name() {
        return "map";
    }

    @Override
    public Report run(Vertx vertx, boolean quick) {
        int[] tps = quick ? new int[] {1} : new int[] {1, 4};
        int[] batches = quick ? new int[] {1, 16} : new int[] {1, 16, 256};
        System.out.println("== map path: driver floor, event-bus floor and kvpager in alternating rounds");
        warmUp(vertx, tps, 3000);
        List<String> lines = new ArrayList<>();
        lines.add(String.format("map path (µs per batch, %d layers x %d buffers x %d MiB pages; a PAGE_MAJOR page id is one %d MiB"
                        + " handle; median of the rounds' medians, lowest–highest round in brackets)", LAYERS, KV_BUFFERS,
                PAGE_BYTES >> 20, LAYERS * KV_BUFFERS * (PAGE_BYTES >> 20)));
        lines.add(PathRow.HEADER);
        for (Layout layout : Layout.values()) {
            for (int tp : tps) {
                for (int batch : batches) {
                    for (PathRow row : measure(vertx, layout, tp, batch)) {
                        System.out.println("  " + row.markdown());
                        lines.add(row.markdown());
                    }
                }
            }
        }
        return new Report(lines, false);
    }

    /**
     * Runs the same cache path on the simulated device first, thousands of times, so the JIT has
     * compiled the coordinator, ledger and worker before anything is timed on the GPU.
     */
    static void warmUp(Vertx vertx, int[] tps, int rounds) {
        for (Layout layout : Layout.values()) {
            for (int tp : tps) {
                String instance = "warm-" + layout.name().toLowerCase() + "-tp" + tp;
                KvCacheOptions sim = options(instance, layout, tp).setDevice("sim")
                        .setSim(SimOptions.defaults().withGpuKey(instance));
                KvCache cache = Await.of(KvCache.deploy(vertx, sim));
                try {
                    TwoPhaseLoop.medians(vertx, rounds, () -> new AllocFree(cache, 1));
                    TwoPhaseLoop.medians(vertx, Math.max(1, rounds / 10), () -> new AllocFree(cache, 16));
                } finally {
                    Await.of(cache.close());
                }
            }
        }
    }

    private static int rounds(int batch) {
        return batch >= 256 ? 5 : 7;
    }

    private static int repeats(Layout layout, int batch) {
        if (batch >= 256) {
            return 1;
        }
        if (batch >= 16) {
            return layout == Layout.PER_LAYER ? 2 : 8;
        }
        return layout == Layout.PER_LAYER ? 8 : 30;
    }

    private static List<PathRow> measure(Vertx vertx, Layout layout, int tp, int batch) {
        Geometry geometry = new Geometry(LAYERS, KV_BUFFERS, PAGE_BYTES, PAGE_BYTES, PAGES, layout);
        int repeats = repeats(layout, batch);
        String instance = "bench-" + layout.name().toLowerCase() + "-tp" + tp + "-b" + batch;
        // PAGE_MAJOR at TP=1 is taken apart further: the engine on the cache's own context, the
        // unmapped handles kept in the rank's pool, and the driver loop on a rank's thread
        boolean apart = layout == Layout.PAGE_MAJOR && tp == 1 && batch <= 16;
        List<KvCache> caches = new ArrayList<>();
        RankThreadFloor onRank = null;
        try (RawPageLoop floor = RawPageLoop.open(0, geometry, tp); BusFloor bus = BusFloor.open(vertx, tp)) {
            KvCache cache = Await.of(KvCache.deploy(vertx, options(instance, layout, tp)));
            caches.add(cache);
            // steps taken through each cache, which its counters must show in the end
            long[] steps = new long[3];
            Map<String, Supplier<double[]>> ways = new LinkedHashMap<>();
            ways.put("", () -> {
                steps[0] += repeats;
                return TwoPhaseLoop.medians(vertx, repeats, () -> new AllocFree(cache, batch));
            });
            if (apart) {
                ways.put(", on the cache's context", () -> {
                    steps[0] += repeats;
                    return TwoPhaseLoop.medians(cache.context(), repeats, () -> new AllocFree(cache, batch));
                });
                KvCache pooled = Await.of(KvCache.deploy(vertx, options(instance + "-pooled", layout, tp)
                        .setHandlePool(new HandlePoolOptions(0, batch))));
                caches.add(pooled);
                ways.put(", on the cache's context, handles kept in the rank's pool", () -> {
                    steps[1] += repeats;
                    return TwoPhaseLoop.medians(pooled.context(), repeats, () -> new AllocFree(pooled, batch));
                });
                KvCache unkept = Await.of(KvCache.deploy(vertx, options(instance + "-unkept", layout, tp).setIdleHandlePages(0)));
                caches.add(unkept);
                ways.put(", no handles kept while pages churn (idleHandlePages 0)", () -> {
                    steps[2] += repeats;
                    return TwoPhaseLoop.medians(vertx, repeats, () -> new AllocFree(unkept, batch));
                });
                // what a caller on an event loop of its own adds to the bus floor before kvpager does anything:
                // the hand-off to the coordinator's event loop and the answer's way back
                Context relay = ((VertxInternal) vertx).createEventLoopContext();
                ways.put(": bus floor from an event loop of its own through another event loop, as a caller reaches "
                        + "the coordinator (no kvpager, no driver)", () -> {
                    double relayed = bus.medianMicros(Math.max(repeats, 50), relay);
                    return new double[] {relayed, relayed};
                });
                RankThreadFloor rankFloor = RankThreadFloor.open(vertx, RankThreadFloor.Kind.RAW, geometry, 2 * repeats);
                onRank = rankFloor;
                ways.put(": driver loop on a rank's thread, through the bus (no kvpager)", () -> rankFloor.round(batch, repeats));
            }
            List<PathRow> rows = AlternatingRounds.run(layout + " TP=" + tp + " batch " + batch, rounds(batch),
                    () -> floorRound(floor, batch, repeats), () -> bus.medianMicros(Math.max(repeats, 50)), ways);
            for (int c = 0; c < caches.size(); c++) {
                requireEveryFreeUnmapped(caches.get(c), steps[c] * batch);
            }
            return rows;
        } finally {
            if (onRank != null) {
                onRank.close();
            }
            for (KvCache c : caches) {
                Await.of(c.close());
            }
        }
    }

    /** Median µs of map and of unmap over {@code repeats} batches of the raw loop. */
    static double[] floorRound(RawPageLoop floor, int batch, int repeats) {
        double[] map = new double[repeats];
        double[] unmap = new double[repeats];
        for (int i = 0; i < repeats; i++) {
            map[i] = floor.map(0, batch) / 1e3;
            unmap[i] = floor.unmap(0, batch) / 1e3;
        }
        return new double[] {Spread.median(map), Spread.median(unmap)};
    }

    /**
     * The row timed what it meant to: every alloc mapped its pages and every free unmapped them
     * (none was left for a later call, nor reused from the reserve).
     */
    static void requireEveryFreeUnmapped(KvCache cache, long pages) {
        PoolStats pool = Await.of(cache.stats()).pool();
        if (pool.maps() != pages || pool.unmaps() != pages || pool.mappedPages() != 0) {
            throw new IllegalStateException(cache + ": expected " + pages + " pages mapped and unmapped by alloc and free,"
                    + " counted " + pool.maps() + " maps, " + pool.unmaps() + " unmaps, " + pool.mappedPages() + " still mapped");
        }
    }

    /** {@code alloc(batch)}, then the free of its blocks. */
    static final class AllocFree implements TwoPhaseLoop.Step {
        private final KvCache cache;
        private final int batch;
        private Allocation allocation;

        AllocFree(KvCache cache, int batch) {
            this.cache = cache;
            this.batch = batch;
        }

        @Override
        public Future<?> map() {
            return cache.alloc(batch).compose(a -> {
                if (a.isMiss()) {
                    return Future.failedFuture(new IllegalStateException(cache + ": alloc(" + batch + ") missed: " + a));
                }
                allocation = a;
                return Future.succeededFuture();
            });
        }

        @Override
        public Future<?> unmap() {
            return cache.free(allocation);
        }
    }

    static KvCacheOptions options(String instance, Layout layout, int tp) {
        return options(instance, layout, tp, LAYERS, PAGES);
    }

    /** A cache with one block per page id, every rank on GPU 0, the reserve off and no refill. */
    static KvCacheOptions options(String instance, Layout layout, int tp, int layers, int pages) {
        Map<String, Integer> gpus = new LinkedHashMap<>();
        for (int r = 0; r < tp; r++) {
            gpus.put("pp0/tp" + r, 0);
        }
        return new KvCacheOptions().setInstance(instance).setTp(tp).setLayers(layers).setKvBuffers(KV_BUFFERS)
                .setBlockBytes(PAGE_BYTES).setPageBytes(PAGE_BYTES).setPages(pages).setLayout(layout)
                .setReserveLow(0).setReserveHigh(0).setAdaptiveReserve(false).setRefillIntervalMs(3_600_000)
                .setSendTimeoutMs(120_000).setLocalWorkers(true).setDevice("cuda").setGpus(gpus);
    }
}
