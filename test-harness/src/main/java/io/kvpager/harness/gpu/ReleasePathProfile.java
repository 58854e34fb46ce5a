package io.kvpager.harness.gpu;

import io.kvpager.protocol.CreateTensorsRequest;
import io.kvpager.protocol.Owner;
import io.kvpager.protocol.PagesRequest;
import io.kvpager.protocol.RequestFields;
import io.kvpager.protocol.WorkerAction;
import io.kvpager.Allocation;
import io.kvpager.Geometry;
import io.kvpager.Layout;
import io.kvpager.cache.KvCache;
import io.kvpager.cache.KvCacheOptions;
import io.kvpager.cuda.RawPageLoop;
import io.kvpager.protocol.WorkerProtocol;
import io.kvpager.sim.SimOptions;
import io.kvpager.worker.RankWorker;
import io.kvpager.worker.RankWorkerOptions;
import io.vertx.core.Context;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.internal.ContextInternal;
import io.vertx.core.internal.VertxInternal;
import io.vertx.core.json.JsonObject;
import java.io.IOException;
import java.nio.file.Path;
import java.text.ParseException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Supplier;
import jdk.jfr.Configuration;
import jdk.jfr.Recording;

/**
 * Page ids' way through kvpager on GPU 0 ({@code PAGE_MAJOR}, TP=1, reserve off), taken apart
 * in alternating rounds of the same run: the raw driver loop; the event-bus floor; map and unmap
 * requests sent straight to a rank worker (no coordinator); {@code alloc} then {@code free}
 * (which unmaps) from a context of its own on another event loop than the coordinator's, as the
 * runner measures it; the same from the coordinator's own context (no hop between caller and
 * coordinator); the same from another context on the coordinator's event loop (what a cache bound
 * to its caller's event loop would cost); the same from a thread
 * without a Vert.x context, waiting with {@code await} (its answers come through the cache's
 * callback context); and the release in two calls as it was before a free unmapped ({@code free}
 * into a reserve, then {@code trim}).
 *
 * <p>Arguments: {@code [rounds] [steps] [--batch n] [--sim] [--jfr recording.jfr]} (defaults 7
 * rounds, 300 steps a round, one page id a batch). {@code --sim} runs every row but the driver
 * floor on the simulated device without its latency model, on a machine without a GPU: what is
 * left is kvpager's own path and its thread hand-offs. With {@code --jfr}, a JFR recording (the
 * {@code profile} settings, Java and native samples every millisecond) of the rounds is written.
 */
public final class ReleasePathProfile {

    /** A row's figures where it was not taken (no GPU): left out of the table. */
    private static final double[] NONE = {Double.NaN, Double.NaN};

    private ReleasePathProfile() {
    }

    public static void main(String[] args) throws IOException, ParseException {
        int rounds = 7;
        int steps = 300;
        int batch = 1;
        boolean sim = false;
        String jfr = null;
        int positional = 0;
        for (int i = 0; i < args.length; i++) {
            switch (args[i]) {
                case "--batch" -> batch = Integer.parseInt(args[++i]);
                case "--sim" -> sim = true;
                case "--jfr" -> jfr = args[++i];
                default -> {
                    if (positional == 0) {
                        rounds = Integer.parseInt(args[i]);
                    } else if (positional == 1) {
                        steps = Integer.parseInt(args[i]);
                    } else {
                        throw new IllegalArgumentException("unexpected argument " + args[i]
                                + "; arguments: [rounds] [steps] [--batch n] [--sim] [--jfr file]");
                    }
                    positional++;
                }
            }
        }
        if (batch < 1 || batch > MapPathBenchmark.PAGES / 2) {
            throw new IllegalArgumentException("--batch must be 1.." + MapPathBenchmark.PAGES / 2 + ", got " + batch);
        }
        int pages = batch;
        Vertx vertx = Vertx.vertx();
        List<KvCache> caches = new ArrayList<>();
        try {
            MapPathBenchmark.warmUp(vertx, new int[] {1}, 3000);
            Geometry geometry = new Geometry(MapPathBenchmark.LAYERS, MapPathBenchmark.KV_BUFFERS,
                    MapPathBenchmark.PAGE_BYTES, MapPathBenchmark.PAGE_BYTES, MapPathBenchmark.PAGES, Layout.PAGE_MAJOR);
            KvCache oneCall = Await.of(KvCache.deploy(vertx, options("profile", sim)));
            caches.add(oneCall);
            KvCache twoCalls = Await.of(KvCache.deploy(vertx, options("profile-two-calls", sim).setReserveHigh(pages)));
            caches.add(twoCalls);
            ContextInternal coordinator = (ContextInternal) oneCall.context();
            // the caller on an event loop that is not the coordinator's (Vert.x hands out event loops in
            // turn, so a context of its own could land on the coordinator's), and one on the same loop
            Supplier<Context> otherLoop = () -> {
                ContextInternal c;
                do {
                    c = ((VertxInternal) vertx).createEventLoopContext();
                } while (c.nettyEventLoop() == coordinator.nettyEventLoop());
                return c;
            };
            Context sameLoop = ((VertxInternal) vertx).contextBuilder().withEventLoop(coordinator.nettyEventLoop()).build();
            RankWorkerOptions worker = new RankWorkerOptions().setInstance("direct").setPp(0).setTp(0).setGpu(0);
            RankWorker direct = Await.of(RankWorker.deploy(vertx, sim
                    ? worker.setDevice("sim").setSim(SimOptions.defaults().withGpuKey("direct")) : worker.setDevice("cuda")));
            Recording recording = jfr != null ? startRecording() : null;
            String[] names = {"driver floor", "bus floor", "straight to a worker",
                "kvpager alloc / free (caller on another event loop)", "kvpager on the cache's context (KvCache.context())",
                "kvpager from another context on the coordinator's event loop", "kvpager from a thread of its own (await)",
                "kvpager alloc / free + trim (two calls)",
                "driver floor on a rank's thread, through the bus", "  its handler alone",
                "kvpager's device mapper on a rank's thread, through the bus", "  its handler alone",
                "a 60 µs busy handler on a rank's thread, through the bus", "  its handler alone"};
            double[][][] figures = new double[names.length][2][rounds];
            AtomicLong requestIds = new AtomicLong();
            try (RawPageLoop raw = sim ? null : RawPageLoop.open(0, geometry, 1); BusFloor bus = BusFloor.open(vertx, 1);
                 RankThreadFloor rawOnRank = sim ? null : RankThreadFloor.open(vertx, RankThreadFloor.Kind.RAW, geometry, 2 * steps);
                 RankThreadFloor mapperOnRank = sim ? null
                         : RankThreadFloor.open(vertx, RankThreadFloor.Kind.MAPPER, geometry, 2 * steps);
                 RankThreadFloor spinOnRank = RankThreadFloor.open(vertx, RankThreadFloor.Kind.SPIN, geometry, 2 * steps)) {
                createTensors(vertx, direct);
                for (int r = -1; r < rounds; r++) {
                    double[][] round = {
                        raw == null ? NONE : MapPathBenchmark.floorRound(raw, pages, steps),
                        {bus.medianMicros(steps), 0},
                        TwoPhaseLoop.medians(vertx, steps, () -> new WorkerStep(vertx, direct, requestIds, pages)),
                        TwoPhaseLoop.medians(otherLoop.get(), steps, () -> new MapPathBenchmark.AllocFree(oneCall, pages)),
                        TwoPhaseLoop.medians(coordinator, steps, () -> new MapPathBenchmark.AllocFree(oneCall, pages)),
                        TwoPhaseLoop.medians(sameLoop, steps, () -> new MapPathBenchmark.AllocFree(oneCall, pages)),
                        awaited(oneCall, pages, steps),
                        TwoPhaseLoop.medians(otherLoop.get(), steps, () -> new FreeThenTrim(twoCalls, pages)),
                        rawOnRank == null ? NONE : rawOnRank.round(pages, steps),
                        rawOnRank == null ? NONE : rawOnRank.handlerMedians(),
                        mapperOnRank == null ? NONE : mapperOnRank.round(pages, steps),
                        mapperOnRank == null ? NONE : mapperOnRank.handlerMedians(),
                        spinOnRank.round(pages, steps),
                        spinOnRank.handlerMedians(),
                    };
                    for (int i = 0; r >= 0 && i < names.length; i++) {
                        figures[i][0][r] = round[i][0];
                        figures[i][1][r] = round[i][1];
                    }
                }
            } finally {
                if (recording != null) {
                    recording.stop();
                    recording.dump(Path.of(jfr));
                    recording.close();
                }
                Await.of(direct.undeploy());
            }
            System.out.printf("release path, PAGE_MAJOR TP=1, %d page id%s a batch%s, %d rounds of %d steps, µs: median of the"
                    + " rounds (lowest–highest)%n| | map | unmap |%n| --- | --- | --- |%n", pages, pages == 1 ? "" : "s",
                    sim ? ", simulated device without latency" : "", rounds, steps);
            for (int i = sim ? 1 : 0; i < names.length; i++) {
                if (Double.isNaN(figures[i][0][0])) {
                    continue;
                }
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

    private static KvCacheOptions options(String instance, boolean sim) {
        KvCacheOptions options = MapPathBenchmark.options(instance, Layout.PAGE_MAJOR, 1);
        return sim ? options.setDevice("sim").setSim(SimOptions.defaults().withGpuKey(instance)) : options;
    }

    /** Medians in µs of {@code alloc} and {@code free}, each awaited by this thread, which has no Vert.x context. */
    private static double[] awaited(KvCache cache, int pages, int steps) {
        double[] map = new double[steps];
        double[] unmap = new double[steps];
        for (int i = 0; i < steps; i++) {
            long t0 = System.nanoTime();
            Allocation a = Await.of(cache.alloc(pages));
            long t1 = System.nanoTime();
            if (a.isMiss()) {
                throw new IllegalStateException(cache + ": alloc(" + pages + ") missed: " + a);
            }
            Await.of(cache.free(a));
            map[i] = (t1 - t0) / 1e3;
            unmap[i] = (System.nanoTime() - t1) / 1e3;
        }
        return new double[] {Spread.median(map), Spread.median(unmap)};
    }

    /** The owner of the group sent to straight: the profile stands in for a coordinator. */
    private static final Owner OWNER = new Owner("release-path-profile", 1);

    private static void createTensors(Vertx vertx, RankWorker worker) {
        CreateTensorsRequest create = new CreateTensorsRequest(0, OWNER, new Geometry(MapPathBenchmark.LAYERS,
                MapPathBenchmark.KV_BUFFERS, MapPathBenchmark.PAGE_BYTES, MapPathBenchmark.PAGE_BYTES, MapPathBenchmark.PAGES,
                Layout.PAGE_MAJOR), false, null);
        Await.of(vertx.eventBus().request(worker.address(), create.toJson(), create.action().delivery()));
    }

    /** Map, then unmap, of pages 0 .. pages-1, sent to a worker as the coordinator sends them. */
    private static final class WorkerStep implements TwoPhaseLoop.Step {
        private final Vertx vertx;
        private final RankWorker worker;
        private final AtomicLong ids;
        private final int[] pages;

        WorkerStep(Vertx vertx, RankWorker worker, AtomicLong ids, int pages) {
            this.vertx = vertx;
            this.worker = worker;
            this.ids = ids;
            this.pages = new int[pages];
            for (int p = 0; p < pages; p++) {
                this.pages[p] = p;
            }
        }

        @Override
        public Future<?> map() {
            return send(WorkerAction.MAP);
        }

        @Override
        public Future<?> unmap() {
            return send(WorkerAction.UNMAP);
        }

        private Future<?> send(WorkerAction action) {
            PagesRequest request = new PagesRequest(action, "direct-" + ids.incrementAndGet(), 0, OWNER, pages);
            return vertx.eventBus().request(worker.address(),
                    request.toJson().put(RequestFields.PP, 0).put(RequestFields.TP, 0), action.delivery());
        }
    }

    /** The release in two calls: the free leaves the page in the reserve, the trim unmaps it. */
    private static final class FreeThenTrim implements TwoPhaseLoop.Step {
        private final MapPathBenchmark.AllocFree allocFree;
        private final KvCache cache;

        FreeThenTrim(KvCache cache, int pages) {
            this.cache = cache;
            this.allocFree = new MapPathBenchmark.AllocFree(cache, pages);
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
