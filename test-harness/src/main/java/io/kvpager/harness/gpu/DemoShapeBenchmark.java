package io.kvpager.harness.gpu;

import io.kvpager.Geometry;
import io.kvpager.Layout;
import io.kvpager.cache.KvCache;
import io.kvpager.cuda.RawPageLoop;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import java.util.ArrayList;
import java.util.List;

/**
 * The demo's shape on GPU 0: three caches of TP=2 (32, 40 and 80 layers, like the demo's 7B-,
 * 13B- and 70B-like models, {@code PAGE_MAJOR}, 2 MiB pages, one block per page id) on the one GPU,
 * their allocations interleaved: a step allocates {@code batch} page ids in all three at once and,
 * once all three are served, frees all three at once. The floor maps and unmaps the same page ids
 * of the same six ranks' tensors with the raw driver loop on one thread, cache after cache; the
 * bus floor is a joined request to six echo ranks. Rounds alternate as in the map path.
 */
final class DemoShapeBenchmark implements GpuSection {

    static final int TP = 2;
    static final int[] LAYERS = {32, 40, 80};
    static final int PAGES = 64;

    @Override
    public String name() {
        return "demo";
    }

    @Override
    public Report run(Vertx vertx, boolean quick) {
        System.out.println("== the demo's shape: 3 caches x TP=2 on one GPU, interleaved allocations");
        MapPathBenchmark.warmUp(vertx, new int[] {TP}, 2000);
        List<String> lines = new ArrayList<>();
        lines.add("the demo's shape (µs per step: one batch in each of 3 caches of TP=2, 32/40/80 layers x K,V x 2 MiB pages,"
                + " PAGE_MAJOR, all on GPU 0, the three allocations in flight at once, then the three frees)");
        lines.add(PathRow.HEADER);
        for (int batch : quick ? new int[] {1} : new int[] {1, 16}) {
            for (PathRow row : measure(vertx, batch)) {
                System.out.println("  " + row.markdown());
                lines.add(row.markdown());
            }
        }
        return new Report(lines, false);
    }

    private static List<PathRow> measure(Vertx vertx, int batch) {
        int repeats = batch == 1 ? 20 : 4;
        List<KvCache> caches = new ArrayList<>();
        List<RawPageLoop> floors = new ArrayList<>();
        int[] steps = {0};
        try (BusFloor bus = BusFloor.open(vertx, LAYERS.length * TP)) {
            for (int layers : LAYERS) {
                caches.add(Await.of(KvCache.deploy(vertx, MapPathBenchmark.options("demo-shape-" + layers + "-b" + batch,
                        Layout.PAGE_MAJOR, TP, layers, PAGES))));
                floors.add(RawPageLoop.open(0, geometry(layers), TP));
            }
            List<PathRow> rows = AlternatingRounds.run("3 caches x TP=2 batch " + batch, 7,
                    () -> floorRound(floors, batch, repeats), () -> bus.medianMicros(50), () -> {
                        steps[0] += repeats;
                        return TwoPhaseLoop.medians(vertx, repeats, () -> new Interleaved(caches, batch));
                    });
            for (KvCache cache : caches) {
                MapPathBenchmark.requireEveryFreeUnmapped(cache, (long) steps[0] * batch);
            }
            return rows;
        } finally {
            for (RawPageLoop floor : floors) {
                floor.close();
            }
            for (KvCache cache : caches) {
                Await.of(cache.close());
            }
        }
    }

    /** Median µs of map and unmap over {@code repeats} steps of the raw loop, one cache's ranks after another. */
    private static double[] floorRound(List<RawPageLoop> floors, int batch, int repeats) {
        double[] map = new double[repeats];
        double[] unmap = new double[repeats];
        for (int i = 0; i < repeats; i++) {
            long mapNanos = 0;
            for (RawPageLoop floor : floors) {
                mapNanos += floor.map(0, batch);
            }
            long unmapNanos = 0;
            for (RawPageLoop floor : floors) {
                unmapNanos += floor.unmap(0, batch);
            }
            map[i] = mapNanos / 1e3;
            unmap[i] = unmapNanos / 1e3;
        }
        return new double[] {Spread.median(map), Spread.median(unmap)};
    }

    /** One alloc-then-free per cache, the three in flight together. */
    private static final class Interleaved implements TwoPhaseLoop.Step {
        private final List<MapPathBenchmark.AllocFree> steps = new ArrayList<>();

        Interleaved(List<KvCache> caches, int batch) {
            for (KvCache cache : caches) {
                steps.add(new MapPathBenchmark.AllocFree(cache, batch));
            }
        }

        @Override
        public Future<?> map() {
            return Future.all(steps.stream().map(MapPathBenchmark.AllocFree::map).toList());
        }

        @Override
        public Future<?> unmap() {
            return Future.all(steps.stream().map(MapPathBenchmark.AllocFree::unmap).toList());
        }
    }

    private static Geometry geometry(int layers) {
        return new Geometry(layers, 2, MapPathBenchmark.PAGE_BYTES, MapPathBenchmark.PAGE_BYTES, PAGES, Layout.PAGE_MAJOR);
    }
}
