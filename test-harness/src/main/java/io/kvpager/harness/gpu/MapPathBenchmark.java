package io.kvpager.harness.gpu;

import io.kvpager.Geometry;
import io.kvpager.KvCache;
import io.kvpager.KvCacheOptions;
import io.kvpager.Layout;
import io.kvpager.cuda.RawPageLoop;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.Vertx;
import io.vertx.core.json.JsonObject;
import java.util.ArrayList;
import java.util.List;

/**
 * kvpager's map and unmap path (alloc through the coordinator, fanned out to every rank's worker
 * on GPU 0; free plus trim for the unmap) beside the raw driver loop doing the same work on one
 * thread ({@link RawPageLoop}), both in this run, for each layout, TP size and batch size.
 *
 * <p>One block per page id, so {@code alloc(n)} maps exactly {@code n} new page ids in one batch;
 * the reserve is off, so every alloc maps and every trim unmaps.
 */
final class MapPathBenchmark {

    static final int LAYERS = 16;
    static final int KV_BUFFERS = 2;
    static final long PAGE_BYTES = 2L << 20;
    static final int PAGES = 256;

    /** One measured row: medians in microseconds of one batch. */
    record Row(Layout layout, int tp, int batch, double floorMap, double kvMap, double floorUnmap, double kvUnmap) {
        double mapRatio() {
            return kvMap / floorMap;
        }

        double unmapRatio() {
            return kvUnmap / floorUnmap;
        }
    }

    private final Vertx vertx;

    MapPathBenchmark(Vertx vertx) {
        this.vertx = vertx;
    }

    /**
     * Runs the same cache path on the simulated device first, thousands of times, so the JIT has
     * compiled the coordinator, ledger and worker before anything is timed on the GPU.
     */
    void warmUp(int[] tps, int rounds) {
        for (Layout layout : Layout.values()) {
            for (int tp : tps) {
                String instance = "warm-" + layout.name().toLowerCase() + "-tp" + tp;
                KvCacheOptions sim = options(instance, layout, tp).setDevice("sim")
                        .setSim(new JsonObject().put("gpuKey", instance));
                KvCache cache = Await.of(KvCache.deploy(vertx, sim));
                try {
                    Await.of(onCallerContext(cache, 1, rounds));
                    Await.of(onCallerContext(cache, 16, Math.max(1, rounds / 10)));
                } finally {
                    Await.of(cache.close());
                }
            }
        }
    }

    List<Row> run(int[] tps, int[] batches) {
        List<Row> rows = new ArrayList<>();
        for (Layout layout : Layout.values()) {
            for (int tp : tps) {
                for (int batch : batches) {
                    rows.add(measure(layout, tp, batch, repeats(layout, batch)));
                    Row row = rows.getLast();
                    System.out.printf("  %-10s tp=%d batch=%3d  map %9.1f / %9.1f us (%.2fx)  unmap %9.1f / %9.1f us (%.2fx)%n",
                            layout, tp, batch, row.floorMap, row.kvMap, row.mapRatio(), row.floorUnmap, row.kvUnmap,
                            row.unmapRatio());
                }
            }
        }
        return rows;
    }

    private static int repeats(Layout layout, int batch) {
        if (batch >= 256) {
            return 3;
        }
        if (batch >= 16) {
            return layout == Layout.PER_LAYER ? 12 : 40;
        }
        return 100;
    }

    private Row measure(Layout layout, int tp, int batch, int repeats) {
        Geometry geometry = new Geometry(LAYERS, KV_BUFFERS, PAGE_BYTES, PAGE_BYTES, PAGES, layout);
        double[] floorMap = new double[repeats];
        double[] floorUnmap = new double[repeats];
        try (RawPageLoop floor = RawPageLoop.open(0, geometry, tp)) {
            for (int i = -1; i < repeats; i++) {
                long map = floor.map(0, batch);
                long unmap = floor.unmap(0, batch);
                if (i >= 0) {
                    floorMap[i] = map / 1e3;
                    floorUnmap[i] = unmap / 1e3;
                }
            }
        }
        String instance = "bench-" + layout.name().toLowerCase() + "-tp" + tp + "-b" + batch;
        KvCache cache = Await.of(KvCache.deploy(vertx, options(instance, layout, tp)));
        double[][] kv;
        try {
            kv = Await.of(onCallerContext(cache, batch, repeats));
        } finally {
            Await.of(cache.close());
        }
        double[] kvMap = kv[0];
        double[] kvUnmap = kv[1];
        return new Row(layout, tp, batch, median(floorMap), median(kvMap), median(floorUnmap), median(kvUnmap));
    }

    /**
     * Runs the repeats as an engine would: from a Vert.x event-loop context of its own, each step
     * started when the last one completes, timed there.
     */
    private Future<double[][]> onCallerContext(KvCache cache, int batch, int repeats) {
        Promise<double[][]> done = Promise.promise();
        double[][] times = {new double[repeats], new double[repeats]};
        vertx.getOrCreateContext().runOnContext(v -> step(cache, batch, -1, repeats, times, done));
        return done.future();
    }

    private void step(KvCache cache, int batch, int i, int repeats, double[][] times, Promise<double[][]> done) {
        if (i == repeats) {
            done.complete(times);
            return;
        }
        long t0 = System.nanoTime();
        cache.alloc(batch).compose(allocation -> {
            long t1 = System.nanoTime();
            if (allocation.isMiss()) {
                return Future.failedFuture(new IllegalStateException("alloc(" + batch + ") missed: " + allocation));
            }
            return cache.free(allocation.blocks()).compose(x -> cache.trim()).map(x -> {
                if (i >= 0) {
                    times[0][i] = (t1 - t0) / 1e3;
                    times[1][i] = (System.nanoTime() - t1) / 1e3;
                }
                return x;
            });
        }).onSuccess(x -> step(cache, batch, i + 1, repeats, times, done)).onFailure(done::fail);
    }

    static KvCacheOptions options(String instance, Layout layout, int tp) {
        JsonObject gpus = new JsonObject();
        for (int r = 0; r < tp; r++) {
            gpus.put("pp0/tp" + r, 0);
        }
        return new KvCacheOptions().setInstance(instance).setTp(tp).setLayers(LAYERS).setKvBuffers(KV_BUFFERS)
                .setBlockBytes(PAGE_BYTES).setPageBytes(PAGE_BYTES).setPages(PAGES).setLayout(layout)
                .setReserveLow(0).setReserveHigh(0).setAdaptiveReserve(false).setRefillIntervalMs(3_600_000)
                .setSendTimeoutMs(120_000).setLocalWorkers(true).setDevice("cuda").setGpus(gpus);
    }

    static double median(double[] values) {
        double[] sorted = values.clone();
        java.util.Arrays.sort(sorted);
        int n = sorted.length;
        return n % 2 == 1 ? sorted[n / 2] : (sorted[n / 2 - 1] + sorted[n / 2]) / 2;
    }
}
