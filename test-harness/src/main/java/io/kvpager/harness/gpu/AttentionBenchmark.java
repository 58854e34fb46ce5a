package io.kvpager.harness.gpu;

import static jcuda.driver.JCudaDriver.cuEventCreate;
import static jcuda.driver.JCudaDriver.cuEventElapsedTime;
import static jcuda.driver.JCudaDriver.cuEventRecord;
import static jcuda.driver.JCudaDriver.cuEventSynchronize;
import static jcuda.driver.JCudaDriver.cuMemAlloc;
import static jcuda.driver.JCudaDriver.cuMemFree;
import static jcuda.driver.JCudaDriver.cuMemsetD16;
import static jcuda.driver.JCudaDriver.cuStreamCreate;
import static jcuda.driver.JCudaDriver.cuStreamDestroy;
import static jcuda.driver.JCudaDriver.cuStreamSynchronize;

import io.kvpager.Allocation;
import io.kvpager.Geometry;
import io.kvpager.Layout;
import io.kvpager.attention.AttentionShape;
import io.kvpager.attention.DecodeBatch;
import io.kvpager.attention.DeviceBatch;
import io.kvpager.attention.DeviceBuffer;
import io.kvpager.attention.GroupBlocks;
import io.kvpager.attention.KernelCache;
import io.kvpager.attention.KernelOptions;
import io.kvpager.attention.KvDtype;
import io.kvpager.attention.KvTensors;
import io.kvpager.attention.LaunchPlan;
import io.kvpager.attention.PagedDecodeAttention;
import io.kvpager.cache.KvCache;
import io.kvpager.cache.KvCacheOptions;
import io.kvpager.cuda.DeviceMemory;
import io.vertx.core.Vertx;
import java.io.PrintWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import jcuda.driver.CUdeviceptr;
import jcuda.driver.CUevent;
import jcuda.driver.CUstream;
import org.junit.platform.launcher.EngineFilter;
import org.junit.platform.launcher.LauncherDiscoveryRequest;
import org.junit.platform.launcher.TagFilter;
import org.junit.platform.launcher.core.LauncherDiscoveryRequestBuilder;
import org.junit.platform.launcher.core.LauncherFactory;
import org.junit.platform.launcher.listeners.SummaryGeneratingListener;
import org.junit.platform.launcher.listeners.TestExecutionSummary;

/**
 * Decode attention over kvpager's pages on the GPU, in one run with alternating rounds: for each
 * batch shape, the paged-read floors (kernels that only read the same blocks: 16-byte loads, and
 * the copy engine in several launch shapes, {@link #FLOORS}; the fastest is the table's floor),
 * the attention kernel over pages a real cache mapped (shuffled block tables), and the same kernel over one
 * {@code cuMemAlloc} buffer of the same geometry; and torch's {@code scaled_dot_product_attention}
 * on a contiguous cache of the same shape, one round of its own after each of ours (a
 * {@link TorchPeer}: the Python script beside this runner in its serve mode, when {@code python3}
 * with torch is there). Figures are effective KV bandwidth: K and V bytes read over time.
 *
 * <p>Arguments: {@code [--rounds N] [--torch path/to/attention_torch.py] [--tests] [--tests-only]
 * [--test-classes A,B] [--fp8]}; {@code --tests} first runs the attention module's GPU tests (JUnit,
 * tag {@code gpu}; only the classes {@code --test-classes} names, if given) and exits non-zero if one
 * failed, {@code --tests-only} runs them alone; {@code --fp8} times FP8 pages beside bf16 pages and torch instead ({@link Fp8Benchmark}).
 */
public final class AttentionBenchmark {

    static final int QUERY_HEADS = 32;
    static final int KV_HEADS = 8;
    static final int HEAD_SIZE = 128;
    static final int BLOCK_TOKENS = 16;
    static final int LAYERS = 4;
    static final int TOKENS = 64 * 4096;
    static final int[][] SHAPES = {{64, 4096}, {256, 1024}, {16, 16384}};
    static final int LAUNCHES = 10;
    /**
     * The read floors timed: {0, 0, 0} the 16-byte-load kernel, {n, s, r} the bulk-copy kernel with
     * n thread blocks per multiprocessor of s slots, copies of up to r tokens (16: a whole tile of a
     * block, 32 KiB; 1: a token row, 2 KiB, as the whole-block attention kernel copies); the
     * table's floor is the fastest of them.
     */
    static final int[][] FLOORS = {{0, 0, 0}, {3, 2, 16}, {2, 3, 16}, {1, 4, 16}, {1, 3, 1}, {3, 2, 1}};

    /** One row: medians over the rounds and their spread (min..max), microseconds per launch. */
    public record Row(int batch, int sequence, long kvBytes, Stat floor, Stat paged, Stat contiguous, Stat torch) {
        double tbps(Stat s) {
            return s == null ? Double.NaN : kvBytes / (s.median() * 1e-6) / 1e12;
        }
    }

    /** Median, min and max of per-round figures, microseconds. */
    public record Stat(double median, double min, double max) {
        static Stat of(List<Double> values) {
            double[] v = values.stream().mapToDouble(Double::doubleValue).sorted().toArray();
            return new Stat(v[v.length / 2], v[0], v[v.length - 1]);
        }
    }

    private AttentionBenchmark() {
    }

    public static void main(String[] args) throws Exception {
        int rounds = 5;
        boolean tests = false;
        boolean fp8 = false;
        boolean testsOnly = false;
        List<String> testClasses = List.of();
        Path torchScript = Path.of("test-harness/src/main/python/attention_torch.py");
        for (int i = 0; i < args.length; i++) {
            switch (args[i]) {
                case "--rounds" -> rounds = Integer.parseInt(args[++i]);
                case "--torch" -> torchScript = Path.of(args[++i]);
                case "--tests" -> tests = true;
                case "--fp8" -> fp8 = true;
                case "--test-classes" -> testClasses = List.of(args[++i].split(","));
                case "--tests-only" -> {
                    tests = true;
                    testsOnly = true;
                }
                default -> throw new IllegalArgumentException("unknown argument " + args[i]);
            }
        }
        TestExecutionSummary summary = null;
        if (tests) {
            System.out.println("== attention GPU tests (tag gpu)");
            summary = runTests(testClasses);
            summary.printFailuresTo(new PrintWriter(System.out, true), 30);
            if (testsOnly) {
                System.out.printf("attention GPU tests: %d passed, %d failed, %d skipped%n", summary.getTestsSucceededCount(),
                        summary.getTestsFailedCount(), summary.getTestsSkippedCount() + summary.getTestsAbortedCount());
                System.exit(summary.getTestsFailedCount() == 0 ? 0 : 1);
            }
        }
        Vertx vertx = Vertx.vertx();
        try {
            if (fp8) {
                System.out.println();
                Fp8Benchmark.table(Fp8Benchmark.run(vertx, rounds, torchScript), rounds).forEach(System.out::println);
            } else {
                print(run(vertx, rounds, torchScript), rounds);
            }
        } finally {
            Await.of(vertx.close());
        }
        if (summary != null) {
            System.out.printf("attention GPU tests: %d passed, %d failed, %d skipped%n", summary.getTestsSucceededCount(),
                    summary.getTestsFailedCount(), summary.getTestsSkippedCount() + summary.getTestsAbortedCount());
        }
        System.exit(summary == null || summary.getTestsFailedCount() == 0 ? 0 : 1);
    }

    /** The attention module's GPU tests; only the classes whose simple names {@code only} lists, unless it is empty. */
    private static TestExecutionSummary runTests(List<String> only) {
        LauncherDiscoveryRequest request = LauncherDiscoveryRequestBuilder.request()
                .selectors(GpuTests.testClasses().stream()
                        .filter(c -> c.getClassName().startsWith("io.kvpager.attention."))
                        .filter(c -> only.isEmpty() || only.contains(c.getClassName().substring("io.kvpager.attention.".length())))
                        .toList())
                .filters(TagFilter.includeTags("gpu"), EngineFilter.includeEngines("junit-jupiter"))
                .build();
        SummaryGeneratingListener listener = new SummaryGeneratingListener();
        LauncherFactory.create().execute(request, listener);
        return listener.getSummary();
    }

    static List<Row> run(Vertx vertx, int rounds, Path torchScript) {
        AttentionShape shape = new AttentionShape(QUERY_HEADS, KV_HEADS, HEAD_SIZE, BLOCK_TOKENS, KvDtype.BF16);
        int blocks = TOKENS / BLOCK_TOKENS;
        int perPage = (int) ((2L << 20) / shape.blockBytes());
        int pages = blocks / perPage + 4;
        KvCacheOptions options = new KvCacheOptions().setInstance("attention-bench").setTp(1).setLayers(LAYERS)
                .setKvBuffers(2).setBlockBytes(shape.blockBytes()).setPageBytes(2L << 20).setPages(pages)
                .setLayout(Layout.PAGE_MAJOR).setReserveLow(0).setReserveHigh(0).setAdaptiveReserve(false)
                .setLocalWorkers(true).setDevice("cuda").setGpus(Map.of("pp0/tp0", 0));
        Geometry geometry = new Geometry(LAYERS, 2, shape.blockBytes(), 2L << 20, pages, Layout.PAGE_MAJOR);
        KvCache cache = Await.of(KvCache.deploy(vertx, options));
        CUstream stream = new CUstream();
        try (DeviceMemory memory = DeviceMemory.open(0)) {
            GroupBlocks held = new GroupBlocks(geometry.totalBlocks());
            List<Integer> ids = allocate(cache, blocks, held);
            KvTensors paged = KvTensors.of(geometry, base(cache));
            // Finite values everywhere attention reads: 0x3c3c is about 0.0115 in bf16.
            ids.stream().map(geometry::pageOf).distinct().forEach(page ->
                    memory.fill(paged.view(0, 0) + page * geometry.handleBytes(), geometry.handleBytes(), (byte) 0x3c));
            memory.synchronize();
            Collections.shuffle(ids, new Random(17));

            KernelCache kernels = KernelCache.nvrtc();
            CUdeviceptr contiguousBuffer = new CUdeviceptr();
            cuMemAlloc(contiguousBuffer, geometry.rangeBytes());
            cuMemsetD16(contiguousBuffer, (short) 0x3c3c, geometry.rangeBytes() / 2);
            KvTensors contiguous = KvTensors.of(geometry, new DeviceBuffer(contiguousBuffer, geometry.rangeBytes()).address());
            cuStreamCreate(stream, 0);
            long queryBytes = shape.queryBytes(256);
            CUdeviceptr q = new CUdeviceptr();
            CUdeviceptr o = new CUdeviceptr();
            cuMemAlloc(q, queryBytes);
            cuMemAlloc(o, queryBytes);
            cuMemsetD16(q, (short) 0x3c00, queryBytes / 2);
            DeviceBuffer query = new DeviceBuffer(q, queryBytes);
            DeviceBuffer out = new DeviceBuffer(o, queryBytes);
            List<Row> rows = new ArrayList<>();
            Timer timer = new Timer(stream);
            List<DecodeBatch> batches = new ArrayList<>();
            for (int[] s : SHAPES) {
                batches.add(batch(ids, s[0], s[1]));
            }
            LaunchShapes chosen = tune(KernelOptions.of(shape, geometry), paged, kernels, held, batches, query, out, stream,
                    timer, rounds);
            try (PagedDecodeAttention onPages = chosen.create(paged, kernels);
                 PagedDecodeAttention onBuffer = chosen.create(contiguous, kernels)) {
                System.out.printf("kernel %s for %s, %d multiprocessors x %d resident thread blocks, %s, %d B shared%n",
                        onPages.architecture(), shape, onPages.multiprocessors(), onPages.residentPerMultiprocessor(),
                        chosen.name(), onPages.options().sharedBytes());
                List<DeviceBatch> onPagesBatches = new ArrayList<>();
                List<DeviceBatch> onBufferBatches = new ArrayList<>();
                for (int i = 0; i < SHAPES.length; i++) {
                    DecodeBatch batch = batches.get(i);
                    DeviceBatch a = onPages.newBatch();
                    DeviceBatch b = onBuffer.newBatch();
                    LaunchPlan plan = onPages.load(a, batch, held, stream);
                    System.out.printf("B=%d S=%d: %s, %s%n", SHAPES[i][0], SHAPES[i][1], plan, launchShape(onPages.launchShape(a)));
                    onBuffer.load(b, batch, held, stream);
                    onPagesBatches.add(a);
                    onBufferBatches.add(b);
                }
                Map<Integer, List<Double>> kernelOnPages = new HashMap<>();
                Map<Integer, List<Double>> kernelOnBuffer = new HashMap<>();
                Map<String, List<Double>> torch = new HashMap<>();
                double[][][] floors = new double[FLOORS.length][SHAPES.length][rounds];
                // torch's rounds alternate with ours: one of its own after each of ours, on the same GPU
                try (TorchPeer peer = torchPeer(torchScript)) {
                    for (int round = 0; round < rounds; round++) {
                        for (int i = 0; i < SHAPES.length; i++) {
                            DeviceBatch a = onPagesBatches.get(i);
                            DeviceBatch b = onBufferBatches.get(i);
                            for (int f = 0; f < FLOORS.length; f++) {
                                int[] floor = FLOORS[f];
                                floors[f][i][round] = timer.micros(() -> {
                                    if (floor[0] == 0) {
                                        onPages.launchReadFloor(a, 0, stream);
                                    } else {
                                        onPages.launchBulkReadFloor(a, 0, floor[0], floor[1], floor[2], stream);
                                    }
                                });
                            }
                            kernelOnPages.computeIfAbsent(i, k -> new ArrayList<>()).add(timer.micros(() -> onPages.launch(a, 0, query, out, stream)));
                            kernelOnBuffer.computeIfAbsent(i, k -> new ArrayList<>()).add(timer.micros(() -> onBuffer.launch(b, 0, query, out, stream)));
                        }
                        TorchPeer.add(torch, peer.round());
                    }
                }
                for (int i = 0; i < SHAPES.length; i++) {
                    Stat fastest = null;
                    String named = "";
                    for (int f = 0; f < FLOORS.length; f++) {
                        Stat s = Stat.of(Arrays.stream(floors[f][i]).boxed().toList());
                        System.out.printf("floor B=%d %s: %.1f us (%.1f..%.1f) %.2f TB/s%n", SHAPES[i][0], floorName(FLOORS[f]),
                                s.median(), s.min(), s.max(), batches.get(i).kvBytes(shape) / (s.median() * 1e-6) / 1e12);
                        if (fastest == null || s.median() < fastest.median()) {
                            fastest = s;
                            named = floorName(FLOORS[f]);
                        }
                    }
                    System.out.printf("floor B=%d: the fastest is %s%n", SHAPES[i][0], named);
                    List<Double> torchRounds = torch.get(SHAPES[i][0] + "x" + SHAPES[i][1]);
                    rows.add(new Row(SHAPES[i][0], SHAPES[i][1], batches.get(i).kvBytes(shape), fastest,
                            Stat.of(kernelOnPages.get(i)), Stat.of(kernelOnBuffer.get(i)),
                            torchRounds == null ? null : Stat.of(torchRounds)));
                }
                cuStreamSynchronize(stream);
                for (DeviceBatch d : onPagesBatches) {
                    d.close();
                }
                for (DeviceBatch d : onBufferBatches) {
                    d.close();
                }
            } finally {
                cuMemFree(q);
                cuMemFree(o);
                cuMemFree(contiguousBuffer);
                cuStreamDestroy(stream);
            }
            return rows;
        } finally {
            Await.of(cache.close());
        }
    }

    /**
     * Launch shapes of one operation: the first for every batch it runs whole in one wave, the
     * others tried in order for the rest ({@link PagedDecodeAttention#create(List, KvTensors, int,
     * KernelCache)}); {@link #perBatch} is what an engine gets for a default.
     */
    record LaunchShapes(List<KernelOptions> shapes) {

        /** {@code options} alone. */
        static LaunchShapes of(KernelOptions options) {
            return new LaunchShapes(List.of(options));
        }

        /** {@code defaults} with their one-wave alternatives, as {@code create(shape, ...)} keeps them for the defaults. */
        static LaunchShapes perBatch(KernelOptions defaults) {
            List<KernelOptions> shapes = new ArrayList<>(List.of(defaults));
            shapes.addAll(defaults.oneWaveAlternatives());
            return new LaunchShapes(shapes);
        }

        KernelOptions options() {
            return shapes.getFirst();
        }

        PagedDecodeAttention create(KvTensors tensors, KernelCache kernels) {
            return PagedDecodeAttention.create(shapes, tensors, 0, kernels);
        }

        String name() {
            if (shapes.size() == 1) {
                return launchShape(options());
            }
            List<String> alternatives = shapes.subList(1, shapes.size()).stream()
                    .map(o -> "warps=" + o.warps() + (o.warpPerHead() ? " (a warp per KV head)" : "")).toList();
            return "per batch: " + launchShape(options()) + ", or the first of " + String.join(", ", alternatives)
                    + " that runs a batch whole in one wave";
        }
    }

    /**
     * The launch shapes tried, in alternating rounds over the pages, on every batch shape; the one
     * with the least total time is used for the table.
     */
    private static LaunchShapes tune(KernelOptions defaults, KvTensors paged, KernelCache kernels, GroupBlocks held,
                                     List<DecodeBatch> batches, DeviceBuffer query, DeviceBuffer out, CUstream stream,
                                     Timer timer, int rounds) {
        return tuneAmong(tried(defaults), paged, kernels, held, batches, query, out, stream, timer, rounds);
    }

    private static List<LaunchShapes> tried(KernelOptions defaults) {
        // the default as an engine gets it first; then other warp counts at 2 stages alone: the same 12
        // warps per multiprocessor as the default's 3 x 4 in 4 x 3 (B 64 x 4096 unsplit in one wave, no
        // merge pass) and 2 x 6 (in two waves), 6 x 2; 8 x 1
        List<LaunchShapes> tried = new ArrayList<>();
        tried.add(LaunchShapes.perBatch(defaults));
        for (KernelOptions options : List.of(defaults, defaults.portable(), defaults.with(3, 2, 0, false, 0),
                defaults.with(6, 2, 0, false, 0), defaults.with(2, 2, 0, false, 0), defaults.with(8, 2, 0, false, 0))) {
            tried.add(LaunchShapes.of(options));
        }
        defaults.wholeBlockOptions().ifPresent(whole -> {
            for (KernelOptions options : List.of(whole, whole.wholeBlocks(3, 0, 2), whole.wholeBlocks(3, 0, 4),
                    whole.wholeBlocks(3, 0, 16), whole.wholeBlocks(2, 0, 1), whole.wholeBlocks(2, 0, 4))) {
                tried.add(LaunchShapes.of(options));
            }
        });
        return tried;
    }

    /** Times every launch shape of {@code tried} in alternating rounds on every batch; the least total time wins. */
    static LaunchShapes tuneAmong(List<LaunchShapes> tried, KvTensors paged, KernelCache kernels, GroupBlocks held,
                                  List<DecodeBatch> batches, DeviceBuffer query, DeviceBuffer out, CUstream stream,
                                  Timer timer, int rounds) {
        KernelOptions defaults = tried.getFirst().options();
        int tuned = SHAPES.length;
        List<PagedDecodeAttention> ops = new ArrayList<>();
        List<List<DeviceBatch>> loaded = new ArrayList<>();
        try {
            for (LaunchShapes options : tried) {
                PagedDecodeAttention op = options.create(paged, kernels);
                ops.add(op);
                List<DeviceBatch> mine = new ArrayList<>();
                for (int b = 0; b < tuned; b++) {
                    DeviceBatch d = op.newBatch();
                    op.load(d, batches.get(b), held, stream);
                    mine.add(d);
                }
                loaded.add(mine);
            }
            double[][][] times = new double[tried.size()][tuned][rounds];
            for (int round = 0; round < rounds; round++) {
                for (int i = 0; i < tried.size(); i++) {
                    for (int b = 0; b < tuned; b++) {
                        PagedDecodeAttention op = ops.get(i);
                        DeviceBatch d = loaded.get(i).get(b);
                        times[i][b][round] = timer.micros(() -> op.launch(d, 0, query, out, stream));
                    }
                }
            }
            int best = 0;
            double bestTotal = Double.MAX_VALUE;
            for (int i = 0; i < tried.size(); i++) {
                StringBuilder line = new StringBuilder("tune " + tried.get(i).name() + " resident/SM="
                        + ops.get(i).residentPerMultiprocessor() + ":");
                double total = 0;
                for (int b = 0; b < tuned; b++) {
                    List<Double> values = new ArrayList<>();
                    for (double v : times[i][b]) {
                        values.add(v);
                    }
                    Stat s = Stat.of(values);
                    total += s.median();
                    line.append(String.format(" B=%d %.1f us (%.1f..%.1f) %.2f TB/s;", SHAPES[b][0], s.median(), s.min(),
                            s.max(), batches.get(b).kvBytes(defaults.shape()) / (s.median() * 1e-6) / 1e12));
                }
                System.out.println(line);
                if (total < bestTotal) {
                    bestTotal = total;
                    best = i;
                }
            }
            System.out.println("tune: using " + tried.get(best).name());
            return tried.get(best);
        } finally {
            cuStreamSynchronize(stream);
            loaded.forEach(l -> l.forEach(DeviceBatch::close));
            ops.forEach(PagedDecodeAttention::close);
        }
    }

    /**
     * Allocates {@code blocks} blocks of {@code cache}, at most 1024 an alloc, into {@code held}: their
     * ids, in the order allocated.
     *
     * @throws IllegalStateException when the cache misses
     */
    static List<Integer> allocate(KvCache cache, int blocks, GroupBlocks held) {
        List<Integer> ids = new ArrayList<>();
        for (int taken = 0; taken < blocks; ) {
            Allocation allocation = Await.of(cache.alloc(Math.min(1024, blocks - taken)));
            if (allocation.isMiss()) {
                throw new IllegalStateException("the cache missed while allocating the benchmark's blocks: " + allocation);
            }
            held.add(allocation.blocks());
            for (int b : allocation.blocks()) {
                ids.add(b);
            }
            taken += allocation.size();
        }
        return ids;
    }

    /** Where rank pp0/tp0's tensors start: layer 0's K, the base of a {@code PAGE_MAJOR} pool, from the cache's views. */
    static long base(KvCache cache) {
        return Await.of(cache.views()).getFirst().buffer(0, 0).address();
    }

    static String launchShape(KernelOptions o) {
        if (o.wholeBlocks()) {
            return String.format("whole blocks warps=%d+1 stages=%d tokens/copy=%d blocks/SM=%s", o.warps(), o.stages(),
                    o.tokensPerCopy(), o.blocksPerMultiprocessor() == 0 ? "fit" : o.blocksPerMultiprocessor());
        }
        return String.format("chunked warps=%d%s stages=%d l2Prefetch=%d headsFirst=%s plan=%s", o.warps(),
                o.warpPerHead() ? " (a warp per KV head)" : "", o.stages(), o.l2Prefetch(), o.headsFirst(),
                o.blocksPerMultiprocessor() == 0 ? "waves" : o.blocksPerMultiprocessor() + " blocks/SM");
    }

    static String floorName(int[] floor) {
        return floor[0] == 0 ? "16-byte loads"
                : String.format("bulk copies of %d token(s), %d/SM x %d slots", floor[2], floor[0], floor[1]);
    }

    /** {@code sequences} sequences of {@code length} tokens over the shuffled ids, one after the other. */
    static DecodeBatch batch(List<Integer> ids, int sequences, int length) {
        int perSequence = length / BLOCK_TOKENS;
        int[][] tables = new int[sequences][perSequence];
        int[] lengths = new int[sequences];
        for (int s = 0; s < sequences; s++) {
            for (int k = 0; k < perSequence; k++) {
                tables[s][k] = ids.get(s * perSequence + k);
            }
            lengths[s] = length;
        }
        return DecodeBatch.of(tables, lengths);
    }

    /** The torch peer for {@code script} in serve mode; a failed peer, the reason printed, where it cannot run. */
    static TorchPeer torchPeer(Path script) {
        List<String> command = new ArrayList<>(List.of("python3", script.toString(), "--serve", "--launches",
                String.valueOf(LAUNCHES), "--heads", QUERY_HEADS + "/" + KV_HEADS, "--head-size", String.valueOf(HEAD_SIZE)));
        for (int[] s : SHAPES) {
            command.add(s[0] + "x" + s[1]);
        }
        return Files.isRegularFile(script) ? TorchPeer.start(command) : TorchPeer.none("no script at " + script);
    }

    static void print(List<Row> rows, int rounds) {
        System.out.println();
        table(rows, rounds).forEach(System.out::println);
    }

    /** The rows as the report's markdown table, under a line that says what they are. */
    static List<String> table(List<Row> rows, int rounds) {
        List<String> lines = new ArrayList<>();
        lines.add(String.format("decode attention, bf16, Hq %d, Hkv %d, D %d, %d-token blocks, PAGE_MAJOR %d layers; "
                        + "median us per launch over %d alternating rounds of %d launches (min..max); TB/s = K+V bytes / time",
                QUERY_HEADS, KV_HEADS, HEAD_SIZE, BLOCK_TOKENS, LAYERS, rounds, LAUNCHES));
        lines.add("| B | S | KV MiB | read floor | kvpager pages | one cuMemAlloc buffer | torch SDPA | pages / floor | pages / buffer | torch / pages |");
        lines.add("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |");
        for (Row r : rows) {
            lines.add(String.format("| %d | %d | %d | %s | %s | %s | %s | %.2f | %.3f | %s |", r.batch(), r.sequence(),
                    r.kvBytes() >> 20, cell(r, r.floor()), cell(r, r.paged()), cell(r, r.contiguous()), cell(r, r.torch()),
                    r.floor().median() / r.paged().median(), r.contiguous().median() / r.paged().median(),
                    r.torch() == null ? "n/a" : String.format("%.2fx", r.torch().median() / r.paged().median())));
        }
        return lines;
    }

    private static String cell(Row r, Stat s) {
        if (s == null) {
            return "n/a";
        }
        return String.format("%.1f us (%.1f..%.1f) %.2f TB/s", s.median(), s.min(), s.max(), r.tbps(s));
    }

    /** Mean microseconds per launch of {@link #LAUNCHES} launches after two warm-up launches, timed with events. */
    static final class Timer {
        private final CUstream stream;
        private final CUevent start = new CUevent();
        private final CUevent stop = new CUevent();

        Timer(CUstream stream) {
            this.stream = stream;
            cuEventCreate(start, 0);
            cuEventCreate(stop, 0);
        }

        double micros(Runnable launch) {
            launch.run();
            launch.run();
            cuEventRecord(start, stream);
            for (int i = 0; i < LAUNCHES; i++) {
                launch.run();
            }
            cuEventRecord(stop, stream);
            cuEventSynchronize(stop);
            float[] ms = new float[1];
            cuEventElapsedTime(ms, start, stop);
            return ms[0] * 1000.0 / LAUNCHES;
        }
    }
}
