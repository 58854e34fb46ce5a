package io.kvpager.cli.demo;

import io.kvpager.LimitResult;
import io.kvpager.cache.CacheStats;
import io.kvpager.cache.KvCache;
import io.kvpager.cache.KvCacheOptions;
import io.kvpager.cache.RankStats;
import io.kvpager.cli.ByteSize;
import io.kvpager.cli.status.InstanceDirectory;
import io.kvpager.metrics.MeteredKvCache;
import io.micrometer.core.instrument.MeterRegistry;
import io.kvpager.sim.SimGpu;
import io.kvpager.sim.SimGpus;
import io.vertx.core.Context;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.Vertx;
import io.vertx.core.json.JsonObject;
import java.io.IOException;
import java.io.PrintWriter;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;

/**
 * The main job: one cache instance per model, each with its tp ranks as local workers, all on one
 * shared GPU; a {@link ModelServer} per model replays the {@link ServingTrace} against its cache for
 * the run's duration while memory is sampled every {@value #SAMPLE_MS} ms; then every request still
 * running is drained, every cache trimmed and closed, and the run checks its own invariants.
 *
 * <p>The orchestration blocks the calling thread (a command's main thread) on futures; the
 * engines run on one Vert.x context of their own.
 */
public final class DemoRun implements AutoCloseable {

    static final long SAMPLE_MS = 100;
    private static final long CALL_TIMEOUT_S = 60;

    private final Vertx vertx;
    private final DemoSettings settings;
    private final String gpuKey;
    private final List<KvCache> caches;
    private final List<MemoryTimeline> timelines = new ArrayList<>();
    private boolean closed;
    private volatile boolean stopRequested;
    /** Decode attention over the real pages with {@code --device cuda}; null otherwise. */
    private DemoAttention attention;

    private DemoRun(Vertx vertx, DemoSettings settings, String gpuKey, List<KvCache> caches) {
        this.vertx = vertx;
        this.settings = settings;
        this.gpuKey = gpuKey;
        this.caches = caches;
        settings.models().forEach(m -> timelines.add(new MemoryTimeline()));
    }

    /**
     * Deploys one cache per model and applies the limits asked for.
     *
     * @throws IllegalStateException when a cache does not start or refuses its limit
     */
    public static DemoRun deploy(Vertx vertx, DemoSettings settings) {
        // A GPU namespace of its own, so that runs in one JVM (tests) never share simulated memory.
        String gpuKey = "kvpager-demo-" + ProcessHandle.current().pid() + "-" + System.nanoTime();
        List<KvCache> caches = new ArrayList<>();
        DemoRun run = new DemoRun(vertx, settings, gpuKey, caches);
        try {
            for (ModelProfile model : settings.models()) {
                caches.add(await(KvCache.deploy(vertx, run.options(model)), "deploying the cache of " + model.name()));
                await(new InstanceDirectory(vertx).register(model.instance()), "registering " + model.instance());
                Long limit = settings.limits().get(model.name());
                if (limit != null) {
                    LimitResult result = await(caches.getLast().setMemoryLimit(limit, 1), "limiting " + model.name());
                    if (result.outcome() != LimitResult.Outcome.APPLIED) {
                        throw new IllegalStateException("the limit of " + model.name() + " was not applied: " + result);
                    }
                }
            }
            if (settings.device().equals("cuda")) {
                run.attention = DemoAttention.open(vertx, settings.models(), settings.tp(), settings.gpu());
            }
        } catch (RuntimeException e) {
            run.close();
            throw e;
        }
        return run;
    }

    KvCacheOptions options(ModelProfile model) {
        int tp = settings.tp();
        JsonObject gpus = new JsonObject();
        for (int rank = 0; rank < tp; rank++) {
            gpus.put("pp0/tp" + rank, settings.gpu());
        }
        KvCacheOptions options = new KvCacheOptions()
                .setInstance(model.instance())
                .setTp(tp)
                .setPp(1)
                .setLayers(model.layers())
                .setKvBuffers(2)
                .setBlockBytes(model.blockBytes(tp))
                .setKvDtype(model.kv())
                .setPageBytes(model.geometry(tp, 1).pageBytes())
                .setPages(model.pagesToFill(tp, settings.gpuBytes()))
                .setLayout(model.geometry(tp, 1).layout())
                .setLocalWorkers(true)
                .setIdleHandlePages(settings.idleHandlePages())
                .setGpuMemoryPercent(settings.gpuMemoryPercent())
                .setDevice(settings.device())
                .setGpus(gpus);
        if (settings.device().equals("sim")) {
            options.setSim(new JsonObject()
                    .put("capacityBytes", settings.gpuBytes())
                    .put("latency", true)
                    .put("gpuKey", gpuKey));
        }
        return options;
    }

    /** From now on every alloc of the engines is timed into {@code registry} ({@link MeteredKvCache}); call before {@link #run}. */
    public void meter(MeterRegistry registry) {
        caches.replaceAll(cache -> MeteredKvCache.of(cache, registry));
    }

    /** The caches, one per model in the order of the settings; for meters and status. */
    public List<KvCache> caches() {
        return List.copyOf(caches);
    }

    /**
     * Runs the trace, drains, closes every cache and checks the run's invariants. The chart is
     * not drawn here: {@link #writeChart} draws it once the summary is out, so that a machine that
     * cannot draw (no fonts) still gets the summary.
     *
     * @param err where the progress line goes
     * @param terminal whether {@code err} is a terminal (redraw the line in place)
     */
    public DemoReport run(PrintWriter err, boolean terminal) {
        Context context = vertx.getOrCreateContext();
        List<TraceRequest> trace = ServingTrace.generate(settings.models(), settings.tp(), settings.gpuBytes(),
                settings.duration(), settings.step(), settings.seed());
        List<ModelServer> servers = engines(context, trace);
        long stoppedAt = serve(context, servers, err, terminal);

        List<String> violations = new ArrayList<>();
        List<ModelReport> reports = new ArrayList<>();
        for (int m = 0; m < servers.size(); m++) {
            ModelServer server = servers.get(m);
            CacheStats stats = await(caches.get(m).stats(), "reading the stats of " + server.model().name());
            reports.add(report(server, stats, timelines.get(m)));
            violations.addAll(violations(server, stats, stoppedAt >= 0));
        }
        closeCaches();
        leakedHandles().ifPresent(violations::add);
        return new DemoReport(settings, reports, TraceTotals.of(trace), stoppedAt, violations);
    }

    /**
     * Ends the run early, as Ctrl-C does: no engine takes another step, the requests still running
     * are drained and {@link #run} returns what was served so far. Any thread may call it.
     */
    public void requestStop() {
        stopRequested = true;
    }

    /**
     * Draws the chart of memory per model to the settings' file (parent folders are created).
     *
     * @throws IOException when the file cannot be written
     * @throws Error or RuntimeException from Java2D, e.g. on a machine without fonts
     */
    public void writeChart() throws IOException {
        List<String> names = settings.models().stream().map(ModelProfile::name).toList();
        MemoryChart.write(settings.chart(), "kvpager demo: GPU memory per model", names, timelines, settings.gpuBytes(),
                settings.staticShareBytes());
    }

    /** One engine per model, each with its share of the trace. */
    private List<ModelServer> engines(Context context, List<TraceRequest> trace) {
        List<ModelServer> servers = new ArrayList<>();
        for (int m = 0; m < settings.models().size(); m++) {
            ModelProfile model = settings.models().get(m);
            int index = m;
            List<TraceRequest> own = trace.stream().filter(r -> r.model() == index).toList();
            int blocksPerPage = model.geometry(settings.tp(), 1).blocksPerPage();
            servers.add(new ModelServer(model, caches.get(m), context, settings.step().toMillis(), own,
                    new StaticSplit(settings.staticShareBytes(), blocksPerPage, model.bytesPerPageId(settings.tp()))));
            if (attention != null) {
                servers.getLast().kernels(attention.kernels(m));
            }
        }
        return servers;
    }

    /**
     * Steps every engine until the duration is over or a stop is asked for, then drains them and
     * trims every cache, sampling memory throughout.
     *
     * @return when the engines stopped early, in ms from the start; -1 when they ran the whole duration
     */
    private long serve(Context context, List<ModelServer> servers, PrintWriter err, boolean terminal) {
        Clock clock = new Clock();
        try (DemoProgress progress = new DemoProgress(err, terminal, settings.duration())) {
            Sampler sampler = new Sampler(servers, clock, progress);
            List<Future<Void>> loops = new ArrayList<>();
            await(onContext(context, () -> {
                for (ModelServer server : servers) {
                    Promise<Void> done = Promise.promise();
                    tick(context, server, 0, clock, done);
                    loops.add(done.future());
                }
                sampler.start();
                return Future.succeededFuture();
            }), "starting the engines");
            await(onContext(context, () -> Future.join(loops).mapEmpty()), "serving the trace");
            long stoppedAt = stopRequested && clock.elapsedMs() < settings.duration().toMillis() ? clock.elapsedMs() : -1;
            await(onContext(context, () -> {
                sampler.stop();
                return Future.join(servers.stream().map(ModelServer::drain).toList()).mapEmpty();
            }), "draining the engines");
            await(onContext(context, sampler::sample), "sampling memory after the run");
            for (KvCache cache : caches) {
                await(cache.trim(), "trimming a cache");
            }
            await(onContext(context, sampler::sample), "sampling memory after the trim");
            progress.update(clock.elapsedMs(), sampler.message());
            return stoppedAt;
        }
    }

    /**
     * The run's own invariants for one model, once drained and trimmed. A run stopped early may
     * end before a model finished its first request; every other invariant holds however it ends.
     */
    private static List<String> violations(ModelServer server, CacheStats stats, boolean stoppedEarly) {
        String model = "model " + server.model().name();
        List<String> violations = new ArrayList<>();
        if (server.served() == 0 && !stoppedEarly) {
            violations.add(model + " served no request");
        }
        if (!server.failures().isEmpty()) {
            violations.add(model + " had failed calls: " + server.failures());
        }
        if (server.blocksHeld() != 0) {
            violations.add(model + " still holds " + server.blocksHeld() + " blocks after the drain");
        }
        if (stats.pool().mappedPages() != 0) {
            violations.add(model + " still maps " + stats.pool().mappedPages() + " pages after the trim");
        }
        for (RankStats rank : stats.ranks()) {
            if (!rank.up()) {
                violations.add(model + " rank " + rank.rank() + " is down: " + rank.failure());
            } else if (rank.handles() != 0) {
                violations.add(model + " rank " + rank.rank() + " still holds " + rank.handles() + " handles after the trim");
            }
        }
        return violations;
    }

    private void tick(Context context, ModelServer server, long step, Clock clock, Promise<Void> done) {
        long now = clock.elapsedMs();
        if (now >= settings.duration().toMillis() || stopRequested) {
            done.complete();
            return;
        }
        server.step(now).onComplete(ar -> {
            long stepMs = settings.step().toMillis();
            long next = Math.max(step + 1, clock.elapsedMs() / stepMs);
            long delay = next * stepMs - clock.elapsedMs();
            if (delay < 1) {
                context.runOnContext(v -> tick(context, server, next, clock, done));
            } else {
                vertx.setTimer(delay, id -> tick(context, server, next, clock, done));
            }
        });
    }

    private ModelReport report(ModelServer server, CacheStats stats, MemoryTimeline timeline) {
        StaticSplit split = server.staticSplit();
        LatencyRecorder latency = server.allocLatency();
        return new ModelReport(server.model(), server.arrived(), server.served(), server.unfinished(), server.tokens(), server.allocs(), server.misses(),
                server.preemptions(), latency.percentileMicros(50), latency.percentileMicros(99), stats.pool().maps(),
                stats.pool().unmaps(), timeline.peak(), timeline.mean(), split.refusedAllocs(), split.refusedRequests(),
                server.failures());
    }

    /** GPU memory a cache holds: its mapped pages on every one of its ranks. */
    static long gpuBytes(CacheStats stats) {
        return stats.pool().mappedBytesPerRank() * stats.ranks().size();
    }

    /** On the simulated GPU, every handle must be gone once every cache is closed. */
    private Optional<String> leakedHandles() {
        if (!settings.device().equals("sim")) {
            return Optional.empty();
        }
        Optional<SimGpu> gpu = SimGpus.find(gpuKey, settings.gpu());
        if (gpu.isEmpty()) {
            return Optional.of("the simulated GPU " + settings.gpu() + " was never opened");
        }
        long handles = gpu.get().handlesAlive();
        long bytes = gpu.get().bytesInUse();
        SimGpus.reset(gpuKey);
        return handles == 0 && bytes == 0 ? Optional.empty()
                : Optional.of("the simulated GPU still holds " + handles + " handles (" + ByteSize.format(bytes) + ") after every cache closed");
    }

    private void closeCaches() {
        if (closed) {
            return;
        }
        closed = true;
        InstanceDirectory directory = new InstanceDirectory(vertx);
        List<Future<Void>> closing = new ArrayList<>();
        for (KvCache cache : caches) {
            closing.add(directory.unregister(cache.options().getInstance()).eventually(cache::close));
        }
        await(Future.join(closing).mapEmpty(), "closing the caches");
    }

    /** What decode attention did on the GPU, one line per model; empty without {@code --device cuda}. */
    public List<String> attentionSummary() {
        return attention == null ? List.of() : attention.summary();
    }

    @Override
    public void close() {
        try {
            if (attention != null) {
                attention.close();
            }
            closeCaches();
        } finally {
            SimGpus.reset(gpuKey);
        }
    }

    private static <T> Future<T> onContext(Context context, Supplier<Future<T>> action) {
        Promise<T> promise = Promise.promise();
        context.runOnContext(v -> action.get().onComplete(promise));
        return promise.future();
    }

    static <T> T await(Future<T> future, String what) {
        try {
            return future.await(CALL_TIMEOUT_S, TimeUnit.SECONDS);
        } catch (java.util.concurrent.TimeoutException e) {
            throw new IllegalStateException(what + " took more than " + CALL_TIMEOUT_S + " s");
        } catch (RuntimeException e) {
            throw new IllegalStateException(what + " failed: " + e.getMessage(), e);
        }
    }

    /** Milliseconds since the run started. */
    private static final class Clock {
        private final long start = System.nanoTime();

        long elapsedMs() {
            return (System.nanoTime() - start) / 1_000_000;
        }
    }

    /** Samples every cache's memory at the same instant, and refreshes the progress line. */
    private final class Sampler {
        private final List<ModelServer> servers;
        private final Clock clock;
        private final DemoProgress progress;
        private long timer = -1;
        private boolean inFlight;

        Sampler(List<ModelServer> servers, Clock clock, DemoProgress progress) {
            this.servers = servers;
            this.clock = clock;
            this.progress = progress;
        }

        void start() {
            sample();
            timer = vertx.setPeriodic(SAMPLE_MS, id -> {
                if (!inFlight) {
                    sample();
                }
            });
        }

        void stop() {
            vertx.cancelTimer(timer);
        }

        Future<Void> sample() {
            inFlight = true;
            List<Future<CacheStats>> stats = caches.stream().map(KvCache::stats).toList();
            return Future.all(stats).map(all -> {
                // Taken when the answers are in: samples completing in order keep the timeline in order.
                double at = clock.elapsedMs() / 1000.0;
                for (int m = 0; m < servers.size(); m++) {
                    CacheStats s = all.resultAt(m);
                    timelines.get(m).sample(at, gpuBytes(s));
                }
                progress.update(clock.elapsedMs(), message());
                return (Void) null;
            }).eventually(() -> {
                inFlight = false;
                return Future.succeededFuture();
            });
        }

        String message() {
            long tokens = 0;
            long misses = 0;
            StringBuilder memory = new StringBuilder();
            for (int m = 0; m < servers.size(); m++) {
                ModelServer server = servers.get(m);
                tokens += server.tokens();
                misses += server.totalMisses();
                memory.append(String.format(Locale.ROOT, " %s %.1fG", server.model().name(), timelines.get(m).last() / (double) (1L << 30)));
            }
            return String.format(Locale.ROOT, "%,d tokens |%s | misses %d", tokens, memory, misses);
        }
    }
}
