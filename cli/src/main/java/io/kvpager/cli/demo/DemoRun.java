package io.kvpager.cli.demo;

import io.kvpager.LimitResult;
import io.kvpager.cache.CacheStats;
import io.kvpager.cache.GpuStats;
import io.kvpager.cache.KvCache;
import io.kvpager.cache.KvCacheOptions;
import io.kvpager.cache.PoolStats;
import io.kvpager.cache.RankStats;
import io.kvpager.cli.text.ByteSize;
import io.kvpager.cli.status.InstanceDirectory;
import io.kvpager.metrics.MeteredKvCache;
import io.micrometer.core.instrument.MeterRegistry;
import io.kvpager.sim.SimGpu;
import io.kvpager.sim.SimGpus;
import io.kvpager.sim.SimOptions;
import io.vertx.core.Context;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.Vertx;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.io.PrintWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
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
    /** Decode attention's time modelled on {@code --device sim}; null otherwise. */
    private SimAttention simAttention;
    /** Every model's limit per rank under {@link SharingPolicy#STATIC}; 0 under the other policies. */
    private long staticLimitPerRank;

    /** Memory of the shared GPU: the device's own on cuda, {@code --capacity} on sim. */
    private final long deviceBytes;
    /** What the caches share of it: {@link DemoSettings#cacheBudgetBytes}; the trace is sized to it. */
    private final long cacheBudget;

    private DemoRun(Vertx vertx, DemoSettings settings, String gpuKey, List<KvCache> caches, long deviceBytes) {
        this.vertx = vertx;
        this.settings = settings;
        this.gpuKey = gpuKey;
        this.caches = caches;
        this.deviceBytes = deviceBytes;
        this.cacheBudget = settings.cacheBudgetBytes(deviceBytes);
        settings.models().forEach(m -> timelines.add(new MemoryTimeline()));
    }

    /**
     * Deploys one cache per model under the settings' policy and applies the limits asked for:
     * {@link SharingPolicy#STATIC} limits every model without a {@code --limit} of its own to an
     * equal share of the GPU's budget, as the broker counts it, per rank.
     *
     * @throws IllegalStateException when a cache does not start or refuses its limit
     */
    public static DemoRun deploy(Vertx vertx, DemoSettings settings) {
        // A GPU namespace of its own, so that runs in one JVM (tests) never share simulated memory.
        String gpuKey = "kvpager-demo-" + ProcessHandle.current().pid() + "-" + System.nanoTime();
        List<KvCache> caches = new ArrayList<>();
        long deviceBytes = settings.device().equals("cuda") ? DemoAttention.totalBytes(settings.gpu()) : settings.gpuBytes();
        DemoRun run = new DemoRun(vertx, settings, gpuKey, caches, deviceBytes);
        try {
            for (ModelProfile model : settings.models()) {
                caches.add(await(KvCache.deploy(vertx, run.options(model)), "deploying the cache of " + model.name()));
                await(new InstanceDirectory(vertx).register(model.instance()), "registering " + model.instance());
            }
            if (settings.policy() == SharingPolicy.STATIC) {
                CacheStats stats = await(caches.getFirst().stats(), "reading the GPU's budget");
                long budget = stats.gpus().isEmpty() ? run.cacheBudget : stats.gpus().getFirst().capacityBytes();
                run.staticLimitPerRank = budget / settings.models().size() / settings.tp();
            }
            for (int m = 0; m < caches.size(); m++) {
                ModelProfile model = settings.models().get(m);
                Long limit = settings.limits().get(model.name());
                if (limit == null && run.staticLimitPerRank > 0) {
                    limit = run.staticLimitPerRank;
                }
                if (limit != null) {
                    LimitResult result = await(caches.get(m).setMemoryLimit(limit, 1), "limiting " + model.name());
                    if (result.outcome() != LimitResult.Outcome.APPLIED) {
                        throw new IllegalStateException("the limit of " + model.name() + " was not applied: " + result);
                    }
                }
            }
            if (settings.device().equals("cuda")) {
                run.attention = DemoAttention.open(vertx, settings.models(), settings.tp(), settings.gpu(), settings.weights());
            } else {
                run.simAttention = new SimAttention(vertx, settings.attentionBandwidth());
            }
        } catch (RuntimeException e) {
            run.close();
            throw e;
        }
        return run;
    }

    KvCacheOptions options(ModelProfile model) {
        int tp = settings.tp();
        Map<String, Integer> gpus = new LinkedHashMap<>();
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
                .setPages(model.pagesToFill(tp, cacheBudget))
                .setLayout(model.geometry(tp, 1).layout())
                .setLocalWorkers(true)
                .setIdleHandlePages(settings.idleHandlePages())
                .setGpuMemoryPercent(settings.cachePercent(deviceBytes))
                .setDevice(settings.device())
                .setGpus(gpus);
        // static: limits do the splitting, as --limit does without a policy; first-come: no guarantee;
        // arbitrated: the broker's default, an equal guaranteed share each, with reclaim
        if (settings.policy() != SharingPolicy.ARBITRATED) {
            options.setGuaranteePercent(0);
        }
        if (settings.device().equals("sim")) {
            options.setSim(SimOptions.defaults().withCapacityBytes(settings.gpuBytes()).withLatency(true).withGpuKey(gpuKey));
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
        // requests live as many steps as they decode tokens: the trace is sized in pages, at the steps the GPU takes under its load
        OfferedLoad.Scale scale = new OfferedLoad.Scale(settings.models(), settings.tp(), settings.weights(), traceBudget(),
                settings.duration(), settings.step(), settings.attentionBandwidth());
        TraceReplay.Plan plan = settings.trace().plan(scale, settings.load(), settings.seed());
        List<TraceRequest> trace = plan.requests();
        Clock clock = new Clock();
        List<ModelServer> servers = engines(context, trace, clock);
        Sampler sampler = new Sampler(servers, clock);
        long stoppedAt = serve(context, servers, clock, sampler, err, terminal);

        List<String> violations = new ArrayList<>();
        List<ModelReport> reports = new ArrayList<>();
        for (int m = 0; m < servers.size(); m++) {
            ModelServer server = servers.get(m);
            CacheStats stats = await(caches.get(m).stats(), "reading the stats of " + server.model().name());
            reports.add(report(server, stats, timelines.get(m), sampler.account.totals(), m));
            violations.addAll(violations(server, stats, stoppedAt >= 0));
        }
        GrantSamples grants = sampler.grants();
        if (grants.anyOverGrant()) {
            violations.add(grants.overGranted() + " of " + grants.samples() + " samples had the broker grant more than the budget ("
                    + ByteSize.format(grants.maxTakenBytes()) + " of " + ByteSize.format(grants.capacityBytes()) + ")");
        }
        writeRequestLog(servers);
        closeCaches();
        leakedHandles().ifPresent(violations::add);
        OfferedLoad offered = OfferedLoad.of(scale, trace);
        // the report tells the GPU's memory as the run found it: on cuda the device's, not --capacity's default
        return new DemoReport(settings.withGpuBytes(deviceBytes), reports, TraceTotals.of(trace), plan.description() + "; " + offered,
                offered, TokenCeiling.of(settings.models(), settings.duration(), settings.step(), trace), grants, stoppedAt, violations,
                sampler.account.totals());
    }

    /**
     * Appends every request's timeline to the file named by the system property
     * {@value #REQUEST_LOG_PROPERTY}, when set (a CSV with a header; one line per request and policy):
     * where each request's time to first token went.
     */
    private void writeRequestLog(List<ModelServer> servers) {
        String file = System.getProperty(REQUEST_LOG_PROPERTY);
        if (file == null || file.isBlank()) {
            return;
        }
        Path path = Path.of(file);
        List<String> lines = new ArrayList<>();
        if (!Files.exists(path)) {
            lines.add("policy,seed,model,id,arrival_ms,admitted_ms,first_token_ms,finished_ms,prompt,output,decoded,refusals,preemptions,reclaim_preemptions");
        }
        for (ModelServer server : servers) {
            server.requestLog().forEach(line -> lines.add(settings.policy().flag() + "," + settings.seed() + "," + line));
        }
        try {
            Files.write(path, lines, StandardOpenOption.CREATE, StandardOpenOption.APPEND);
        } catch (IOException e) {
            throw new UncheckedIOException("writing the request log " + path, e);
        }
    }

    /**
     * The caches' memory the trace is sized to: theirs, or the bytes the system property
     * {@value #TRACE_BUDGET_PROPERTY} names, so that the same trace can be served with more memory
     * (a larger {@code --capacity}) to find what it allows when memory is not the limit.
     */
    private long traceBudget() {
        String bytes = System.getProperty(TRACE_BUDGET_PROPERTY);
        if (bytes == null || bytes.isBlank()) {
            return cacheBudget;
        }
        long parsed = ByteSize.parse(bytes.strip());
        if (parsed < 1) {
            throw new IllegalArgumentException(TRACE_BUDGET_PROPERTY + " must be at least 1 byte, got " + bytes);
        }
        return parsed;
    }

    /** System property: the memory to size the trace to instead of the caches' ({@link #traceBudget}). */
    static final String TRACE_BUDGET_PROPERTY = "kvpager.demo.traceBudget";

    /** System property naming a file to append every request's timeline to ({@link #writeRequestLog}). */
    static final String REQUEST_LOG_PROPERTY = "kvpager.demo.requestLog";

    /**
     * Ends the run early, as Ctrl-C does: no engine takes another step, the requests still running
     * are drained and {@link #run} returns what was served so far. Any thread may call it.
     */
    public void requestStop() {
        stopRequested = true;
    }

    /**
     * Draws the charts of runs (one, or those of {@code --compare}) to {@code file}, a panel per run,
     * as an SVG when the file's name ends in {@code .svg}, else as a PNG (parent folders are created).
     *
     * @throws IOException when the file cannot be written
     * @throws Error or RuntimeException from Java2D for a PNG, e.g. on a machine without fonts
     */
    public static void writeChart(Path file, List<DemoRun> runs) throws IOException {
        List<ChartPanel> panels = runs.stream().map(DemoRun::chartPanel).toList();
        if (SvgChart.isSvg(file)) {
            SvgChart.write(file, panels);
        } else {
            MemoryChart.write(file, panels);
        }
    }

    /** Whether {@code file} names an SVG chart, by its extension. */
    public static boolean isSvg(Path file) {
        return SvgChart.isSvg(file);
    }

    /** The SVG to write instead of {@code file} when a PNG cannot be drawn: its name with {@code .svg}. */
    public static Path svgBeside(Path file) {
        return SvgChart.beside(file);
    }

    private ChartPanel chartPanel() {
        List<String> names = settings.models().stream().map(ModelProfile::name).toList();
        return new ChartPanel(chartTitle(), names, timelines, cacheBudget, cacheBudget / names.size());
    }

    /** The chart's title: the policy and the trace. */
    String chartTitle() {
        return "kvpager demo: GPU memory per model, " + settings.policy().flag() + ", " + settings.trace().name();
    }

    /** The memory each model held over the run, one timeline per model in the settings' order. */
    List<MemoryTimeline> timelines() {
        return List.copyOf(timelines);
    }

    /** One engine per model, each with its share of the trace. */
    private List<ModelServer> engines(Context context, List<TraceRequest> trace, Clock clock) {
        List<ModelServer> servers = new ArrayList<>();
        for (int m = 0; m < settings.models().size(); m++) {
            ModelProfile model = settings.models().get(m);
            int index = m;
            List<TraceRequest> own = trace.stream().filter(r -> r.model() == index).toList();
            servers.add(new ModelServer(model, caches.get(m), context, settings.step().toMillis(),
                    model.geometry(settings.tp(), 1).blocksPerPage(), own, clock::elapsedMs, settings.targets()));
            if (attention != null) {
                servers.getLast().kernels(attention.kernels(m));
            } else if (simAttention != null) {
                servers.getLast().kernels(simAttention.kernels(model, settings.tp(), settings.weights()));
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
    private long serve(Context context, List<ModelServer> servers, Clock clock, Sampler sampler, PrintWriter err, boolean terminal) {
        try (DemoProgress progress = new DemoProgress(err, terminal, settings.duration())) {
            sampler.progress = progress;
            List<Future<Void>> loops = new ArrayList<>();
            await(onContext(context, () -> {
                for (ModelServer server : servers) {
                    server.answerReclaims();
                }
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
                servers.forEach(server -> server.cache().reclaimHandler(null));
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
            PoolStats pool = stats.pool();
            violations.add(model + " still maps " + pool.mappedPages() + " pages after the trim (in use " + pool.inUsePages() + " holding "
                    + pool.usedBlocks() + " blocks, reserve " + pool.reservePages() + ", reclaimed " + pool.reclaimedPages()
                    + ", quarantined " + pool.quarantinedPages() + ")");
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

    private ModelReport report(ModelServer server, CacheStats stats, MemoryTimeline timeline, MemoryAccount.Totals account, int m) {
        LatencyRecorder latency = server.allocLatency();
        ModelReport.Service service = new ModelReport.Service(server.ttft().count(), millis(server.ttft(), 50), millis(server.ttft(), 99),
                millis(server.tpot(), 99), server.metTargets());
        GpuStats gpu = stats.gpus().isEmpty() ? null : stats.gpus().getFirst();
        ModelReport.Reclaims reclaims = new ModelReport.Reclaims(server.reclaims(), server.reclaimBlocksAsked(), server.reclaimPreemptions(),
                gpu == null ? 0 : gpu.timesCapped(), server.reclaimWait().count(), millis(server.reclaimWait(), 50),
                millis(server.reclaimWait(), 99), gpu == null ? -1 : gpu.guaranteeBytes());
        return new ModelReport(server.model(), server.arrived(), server.served(), server.unfinished(), server.tokens(), server.allocs(), server.misses(),
                server.preemptions(), server.recomputedTokens(), latency.percentileMicros(50), latency.percentileMicros(99), stats.pool().maps(),
                stats.pool().unmaps(), timeline.peak(), timeline.mean(), server.failures(), service, reclaims,
                server.placement(), new ModelReport.Work(server.prefillFirstTokens(), server.prefillAgainTokens(), server.satOutRequestSteps(),
                        account.refusedSeconds()[m], account.heldSeconds()[m]), server.requests());
    }

    private static double millis(LatencyRecorder recorder, double percentile) {
        return recorder.percentileMicros(percentile) / 1000.0;
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
        if (attention == null) {
            return simAttention != null ? simAttention.summary() : List.of();
        }
        List<String> lines = new ArrayList<>(attention.summary());
        try {
            attention.stepFit().summary(settings.attentionBandwidth()).ifPresent(fit -> lines.add("  " + fit));
        } catch (RuntimeException e) {
            // the attention thread failed: the summary says so
        }
        return lines;
    }

    /**
     * On {@code --device cuda}, a warning when the GPU's attention steps took much less or much more
     * time than the step model the trace was sized by gives them ({@link StepFit#warning}); empty otherwise.
     */
    public Optional<String> bandwidthWarning() {
        if (attention == null) {
            return Optional.empty();
        }
        try {
            return attention.stepFit().warning(settings.attentionBandwidth());
        } catch (RuntimeException e) {
            return Optional.empty(); // the attention thread failed: the summary above says so
        }
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
        private DemoProgress progress;
        private long timer = -1;
        private boolean inFlight;
        private long grantSamples;
        private long overGranted;
        private long capacity;
        private long maxTaken;
        private long maxLeasedSum;
        private final MemoryAccount account;
        /** Whether the engines serve: only then are samples counted in the memory account, not while they drain. */
        private boolean serving;

        Sampler(List<ModelServer> servers, Clock clock) {
            this.servers = servers;
            this.clock = clock;
            this.account = new MemoryAccount(servers.stream().map(ModelServer::model).toList(), settings.tp());
        }

        GrantSamples grants() {
            return new GrantSamples(grantSamples, overGranted, capacity, maxTaken, maxLeasedSum);
        }

        /** The broker's taken bytes against its budget, and the sum of the caches' leases. */
        private void sampleGrants(List<CacheStats> all) {
            long taken = -1;
            long leasedSum = 0;
            for (CacheStats s : all) {
                for (GpuStats gpu : s.gpus()) {
                    capacity = gpu.capacityBytes();
                    taken = Math.max(taken, gpu.takenBytes());
                    leasedSum += gpu.leasedBytes();
                }
            }
            if (taken < 0) {
                return;
            }
            grantSamples++;
            maxTaken = Math.max(maxTaken, taken);
            maxLeasedSum = Math.max(maxLeasedSum, leasedSum);
            if (taken > capacity) {
                overGranted++;
            }
        }

        void start() {
            serving = true;
            sample();
            timer = vertx.setPeriodic(SAMPLE_MS, id -> {
                if (!inFlight) {
                    sample();
                }
            });
        }

        void stop() {
            serving = false;
            vertx.cancelTimer(timer);
        }

        Future<Void> sample() {
            inFlight = true;
            // the engines' state now, on their context; the caches' stats as they answer
            long askedMs = clock.elapsedMs();
            boolean counted = serving;
            List<MemoryAccount.Engine> engines = servers.stream().map(server -> server.memoryNow(askedMs)).toList();
            List<Future<CacheStats>> stats = caches.stream().map(KvCache::stats).toList();
            return Future.all(stats).map(all -> {
                // Taken when the answers are in: samples completing in order keep the timeline in order.
                double at = clock.elapsedMs() / 1000.0;
                List<CacheStats> snapshot = new ArrayList<>();
                for (int m = 0; m < servers.size(); m++) {
                    CacheStats s = all.resultAt(m);
                    snapshot.add(s);
                    timelines.get(m).sample(at, gpuBytes(s));
                }
                sampleGrants(snapshot);
                if (counted) {
                    account.sample(at, engines, snapshot, capacity > 0 ? capacity : cacheBudget);
                }
                if (progress != null) {
                    progress.update(clock.elapsedMs(), message());
                }
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
