package io.kvpager.harness.gpu;

import io.kvpager.Geometry;
import io.kvpager.Layout;
import io.kvpager.cache.KvCache;
import io.kvpager.cuda.RawPageLoop;
import io.kvpager.impl.coordinator.CoordinatorView;
import io.kvpager.protocol.WorkerProtocol;
import io.kvpager.worker.RankWorker;
import io.kvpager.worker.RankWorkerOptions;
import io.vertx.core.Context;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.eventbus.DeliveryOptions;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.io.IOException;
import java.nio.file.Path;
import java.text.ParseException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;
import jdk.jfr.Configuration;
import jdk.jfr.Recording;

/**
 * One page id's way through kvpager on GPU 0 ({@code PAGE_MAJOR}, TP=1, reserve off), taken apart
 * in alternating rounds of the same run: the raw driver loop; the event-bus floor; map and unmap
 * requests sent straight to a rank worker (no coordinator); {@code alloc(1)} then {@code free}
 * (which unmaps) from a context of its own, as the runner measures it; the same from the
 * coordinator's own context (no hop between caller and coordinator); and the release in two calls
 * as it was before a free unmapped ({@code free} into a one-page reserve, then {@code trim}).
 *
 * <p>Arguments: {@code [rounds] [steps] [recording.jfr]} (defaults 7 and 300 steps a round); with
 * a file name, a JFR recording (the {@code profile} settings, Java and native samples every
 * millisecond) of the rounds is written there.
 */
public final class ReleasePathProfile {

    private ReleasePathProfile() {
    }

    public static void main(String[] args) throws IOException, ParseException {
        int rounds = args.length > 0 ? Integer.parseInt(args[0]) : 7;
        int steps = args.length > 1 ? Integer.parseInt(args[1]) : 300;
        Vertx vertx = Vertx.vertx();
        List<KvCache> caches = new ArrayList<>();
        try {
            MapPathBenchmark.warmUp(vertx, new int[] {1}, 3000);
            Geometry geometry = new Geometry(MapPathBenchmark.LAYERS, MapPathBenchmark.KV_BUFFERS,
                    MapPathBenchmark.PAGE_BYTES, MapPathBenchmark.PAGE_BYTES, MapPathBenchmark.PAGES, Layout.PAGE_MAJOR);
            KvCache oneCall = Await.of(KvCache.deploy(vertx, MapPathBenchmark.options("profile", Layout.PAGE_MAJOR, 1)));
            caches.add(oneCall);
            KvCache twoCalls = Await.of(KvCache.deploy(vertx, MapPathBenchmark.options("profile-two-calls", Layout.PAGE_MAJOR, 1)
                    .setReserveHigh(1)));
            caches.add(twoCalls);
            Context coordinator = CoordinatorView.of(oneCall).context();
            RankWorker direct = Await.of(RankWorker.deploy(vertx, new RankWorkerOptions().setInstance("direct").setPp(0).setTp(0)
                    .setDevice("cuda").setGpu(0)));
            Recording recording = args.length > 2 ? startRecording() : null;
            String[] names = {"driver floor", "bus floor", "straight to a worker", "kvpager alloc / free",
                "kvpager from the coordinator's context", "kvpager alloc / free + trim (two calls)"};
            double[][][] figures = new double[names.length][2][rounds];
            AtomicLong requestIds = new AtomicLong();
            try (RawPageLoop raw = RawPageLoop.open(0, geometry, 1); BusFloor bus = BusFloor.open(vertx, 1)) {
                createTensors(vertx, direct);
                for (int r = -1; r < rounds; r++) {
                    double[][] round = {
                        MapPathBenchmark.floorRound(raw, 1, steps),
                        {bus.medianMicros(steps), 0},
                        TwoPhaseLoop.medians(vertx, steps, () -> new WorkerStep(vertx, direct, requestIds)),
                        TwoPhaseLoop.medians(vertx, steps, () -> new MapPathBenchmark.AllocFree(oneCall, 1)),
                        TwoPhaseLoop.medians(coordinator, steps, () -> new MapPathBenchmark.AllocFree(oneCall, 1)),
                        TwoPhaseLoop.medians(vertx, steps, () -> new FreeThenTrim(twoCalls)),
                    };
                    for (int i = 0; r >= 0 && i < names.length; i++) {
                        figures[i][0][r] = round[i][0];
                        figures[i][1][r] = round[i][1];
                    }
                }
            } finally {
                if (recording != null) {
                    recording.stop();
                    recording.dump(Path.of(args[2]));
                    recording.close();
                }
                Await.of(direct.undeploy());
            }
            System.out.printf("release path, PAGE_MAJOR TP=1 one page id, %d rounds of %d steps, µs: median of the rounds"
                    + " (lowest–highest)%n| | map | unmap |%n| --- | --- | --- |%n", rounds, steps);
            for (int i = 0; i < names.length; i++) {
                System.out.printf("| %s | %s | %s |%n", names[i], Spread.of(figures[i][0]).micros(),
                        i == 1 ? "" : Spread.of(figures[i][1]).micros());
            }
        } finally {
            for (KvCache cache : caches) {
                Await.of(cache.close());
            }
            Await.of(vertx.close());
        }
    }

    /** The owner of the group sent to straight: the profile stands in for a coordinator. */
    private static final String OWNER = "release-path-profile#1";

    private static void createTensors(Vertx vertx, RankWorker worker) {
        Await.of(vertx.eventBus().request(worker.address(), new JsonObject().put("group", 0)
                .put("layers", MapPathBenchmark.LAYERS).put("kvBuffers", MapPathBenchmark.KV_BUFFERS)
                .put("blockBytes", MapPathBenchmark.PAGE_BYTES).put("pageBytes", MapPathBenchmark.PAGE_BYTES)
                .put("pages", MapPathBenchmark.PAGES).put("layout", Layout.PAGE_MAJOR.name()).put("owner", OWNER),
                new DeliveryOptions().addHeader(WorkerProtocol.ACTION_HEADER, WorkerProtocol.CREATE_TENSORS)));
    }

    /** Map, then unmap, of page 0, sent to a worker as the coordinator sends them. */
    private static final class WorkerStep implements TwoPhaseLoop.Step {
        private final Vertx vertx;
        private final RankWorker worker;
        private final AtomicLong ids;

        WorkerStep(Vertx vertx, RankWorker worker, AtomicLong ids) {
            this.vertx = vertx;
            this.worker = worker;
            this.ids = ids;
        }

        @Override
        public Future<?> map() {
            return send("map");
        }

        @Override
        public Future<?> unmap() {
            return send("unmap");
        }

        private Future<?> send(String action) {
            return vertx.eventBus().request(worker.address(), new JsonObject().put("pp", 0).put("tp", 0).put("group", 0)
                    .put("pages", new JsonArray().add(0)).put("requestId", "direct-" + ids.incrementAndGet()).put("owner", OWNER),
                    new DeliveryOptions().addHeader(WorkerProtocol.ACTION_HEADER, action));
        }
    }

    /** The release in two calls: the free leaves the page in the reserve, the trim unmaps it. */
    private static final class FreeThenTrim implements TwoPhaseLoop.Step {
        private final MapPathBenchmark.AllocFree allocFree;
        private final KvCache cache;

        FreeThenTrim(KvCache cache) {
            this.cache = cache;
            this.allocFree = new MapPathBenchmark.AllocFree(cache, 1);
        }

        @Override
        public Future<?> map() {
            return allocFree.map();
        }

        @Override
        public Future<?> unmap() {
            return allocFree.unmap().compose(freed -> cache.trim());
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
