package io.kvpager.harness.gpu;

import io.kvpager.Geometry;
import io.kvpager.KvCache;
import io.kvpager.Layout;
import io.kvpager.cuda.RawPageLoop;
import io.kvpager.impl.RankWorkers;
import io.kvpager.impl.WorkerConfig;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.eventbus.DeliveryOptions;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.io.IOException;
import java.nio.file.Path;
import java.text.ParseException;
import java.time.Duration;
import jdk.jfr.Configuration;
import jdk.jfr.Recording;

/**
 * One page id's way through kvpager on GPU 0, repeated long enough for a profiler to see nothing
 * else: {@code alloc(1)} then {@code free} (which unmaps the page) on a {@code PAGE_MAJOR} TP=1
 * cache with the reserve off, beside the raw driver loop and the event-bus floor measured right
 * before and after, and the same map and unmap requests sent straight to a rank worker of the same
 * geometry (no coordinator), which splits kvpager's own time between coordinator and worker.
 *
 * <p>Arguments: {@code [steps] [recording.jfr]}: alloc-free steps of the timed loop (default
 * 100,000), after the simulated-device warm-up; with a file name, a JFR recording (the
 * {@code profile} settings, Java and native samples every millisecond) of the timed loop alone
 * is written there.
 */
public final class ReleasePathProfile {

    private ReleasePathProfile() {
    }

    public static void main(String[] args) throws IOException, ParseException {
        int steps = args.length > 0 ? Integer.parseInt(args[0]) : 100_000;
        Vertx vertx = Vertx.vertx();
        try {
            MapPathBenchmark.warmUp(vertx, new int[] {1}, 3000);
            Geometry geometry = new Geometry(MapPathBenchmark.LAYERS, MapPathBenchmark.KV_BUFFERS,
                    MapPathBenchmark.PAGE_BYTES, MapPathBenchmark.PAGE_BYTES, MapPathBenchmark.PAGES, Layout.PAGE_MAJOR);
            KvCache cache = Await.of(KvCache.deploy(vertx, MapPathBenchmark.options("profile", Layout.PAGE_MAJOR, 1)));
            try (RawPageLoop raw = RawPageLoop.open(0, geometry, 1); BusFloor bus = BusFloor.open(vertx, 1)) {
                double[] before = MapPathBenchmark.floorRound(raw, 1, 500);
                double busBefore = bus.medianMicros(500);
                Recording recording = args.length > 1 ? startRecording() : null;
                double[][] times;
                try {
                    times = Await.of(TwoPhaseLoop.run(vertx, steps, () -> new MapPathBenchmark.AllocFree(cache, 1)));
                } finally {
                    if (recording != null) {
                        recording.stop();
                        recording.dump(Path.of(args[1]));
                        recording.close();
                    }
                }
                double[] direct = straightToAWorker(vertx, 2000);
                double[] after = MapPathBenchmark.floorRound(raw, 1, 500);
                double busAfter = bus.medianMicros(500);
                MapPathBenchmark.requireEveryFreeUnmapped(cache, steps);
                System.out.printf("release path, PAGE_MAJOR TP=1 one page id, %d steps, median us: alloc %.1f  free %.1f%n",
                        steps, Spread.median(times[0]), Spread.median(times[1]));
                System.out.printf("straight to a worker, no coordinator, median us: map %.1f  unmap %.1f%n", direct[0], direct[1]);
                System.out.printf("floors before / after, median us: driver map %.1f / %.1f  driver unmap %.1f / %.1f"
                        + "  event bus %.1f / %.1f%n", before[0], after[0], before[1], after[1], busBefore, busAfter);
            } finally {
                Await.of(cache.close());
            }
        } finally {
            Await.of(vertx.close());
        }
    }

    /** Median µs of map and unmap requests of page 0 sent to a worker of its own, as the coordinator sends them. */
    private static double[] straightToAWorker(Vertx vertx, int steps) {
        WorkerConfig config = new WorkerConfig("direct", 0, 0, "cuda", 0);
        String deployment = Await.of(RankWorkers.deploy(vertx, config));
        try {
            Await.of(vertx.eventBus().request(config.address(), new JsonObject().put("group", 0)
                    .put("layers", MapPathBenchmark.LAYERS).put("kvBuffers", MapPathBenchmark.KV_BUFFERS)
                    .put("blockBytes", MapPathBenchmark.PAGE_BYTES).put("pageBytes", MapPathBenchmark.PAGE_BYTES)
                    .put("pages", MapPathBenchmark.PAGES).put("layout", Layout.PAGE_MAJOR.name()),
                    new DeliveryOptions().addHeader("action", "create-tensors")));
            long[] ids = {0};
            return TwoPhaseLoop.medians(vertx, steps, () -> new TwoPhaseLoop.Step() {
                @Override
                public Future<?> map() {
                    return send("map");
                }

                @Override
                public Future<?> unmap() {
                    return send("unmap");
                }

                private Future<?> send(String action) {
                    return vertx.eventBus().request(config.address(), new JsonObject().put("pp", 0).put("tp", 0).put("group", 0)
                            .put("pages", new JsonArray().add(0)).put("requestId", "direct-" + (++ids[0])),
                            new DeliveryOptions().addHeader("action", action));
                }
            });
        } finally {
            Await.of(vertx.undeploy(deployment));
        }
    }

    private static Recording startRecording() throws IOException, ParseException {
        Recording recording = new Recording(Configuration.getConfiguration("profile"));
        recording.enable("jdk.ExecutionSample").withPeriod(Duration.ofMillis(1));
        recording.enable("jdk.NativeMethodSample").withPeriod(Duration.ofMillis(1));
        recording.start();
        return recording;
    }
}
