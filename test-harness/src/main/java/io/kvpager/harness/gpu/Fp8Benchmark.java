package io.kvpager.harness.gpu;

import static jcuda.driver.JCudaDriver.cuMemAlloc;
import static jcuda.driver.JCudaDriver.cuMemFree;
import static jcuda.driver.JCudaDriver.cuMemcpyHtoD;
import static jcuda.driver.JCudaDriver.cuMemsetD16;
import static jcuda.driver.JCudaDriver.cuStreamCreate;
import static jcuda.driver.JCudaDriver.cuStreamDestroy;
import static jcuda.driver.JCudaDriver.cuStreamSynchronize;

import io.kvpager.Geometry;
import io.kvpager.KvFormat;
import io.kvpager.Layout;
import io.kvpager.attention.AppendSlots;
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
import io.kvpager.harness.gpu.AttentionBenchmark.LaunchShapes;
import io.kvpager.harness.gpu.AttentionBenchmark.Stat;
import io.kvpager.harness.gpu.AttentionBenchmark.Timer;
import io.vertx.core.Vertx;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.SplittableRandom;
import jcuda.Pointer;
import jcuda.driver.CUdeviceptr;
import jcuda.driver.CUstream;

/**
 * FP8 pages beside bf16 pages and torch, in one run with alternating rounds ({@code
 * AttentionBenchmark --fp8}): two caches of the benchmark's shape (Hq 32, Hkv 8, D 128, 16-token
 * blocks, {@value AttentionBenchmark#LAYERS} layers, PAGE_MAJOR), one of bf16 blocks and one of
 * FP8 blocks with their scales, the same block tables over both; per batch shape and round, the
 * read floors over each cache's bytes (the same kernels as {@link AttentionBenchmark#FLOORS}; over
 * FP8 blocks the 16-byte-load floor reads the scales too, the bulk-copy ones only the elements),
 * bf16 decode as an engine gets it, FP8 decode on the pages and on one {@code cuMemAlloc} buffer,
 * then one round of torch's SDPA over a contiguous bf16 cache. The FP8 launch shapes are tuned first
 * among the default's per-batch set and a few others (warp and stage counts, a warp per KV head, L2
 * prefetch hints), the least total time over the three batch shapes winning. Then the append:
 * {@value #APPEND_TOKENS} new tokens' bf16 K and V (random) into shuffled slots of the FP8 cache,
 * against its write floor (the same loads and
 * stores, nothing computed), and one decode step's append of 64 tokens.
 */
final class Fp8Benchmark {

    static final int APPEND_TOKENS = 65_536;
    static final int[] APPEND_SHAPES = {APPEND_TOKENS, 64};

    record Row(int batch, int sequence, long fp8Bytes, long bf16Bytes, Stat fp8Floor, String fp8FloorName, Stat fp8Pages,
               Stat fp8Buffer, Stat bf16Floor, Stat bf16Pages, Stat torch) {
    }

    record AppendRow(int tokens, long bytes, Stat floor, Stat append) {
    }

    record Result(List<Row> rows, List<AppendRow> appends, String fp8LaunchShape) {
    }

    private Fp8Benchmark() {
    }

    /** One cache of the benchmark's shape in {@code format}, its blocks allocated, filled and shuffled. */
    private static final class Pool {
        final AttentionShape shape;
        final Geometry geometry;
        final KvCache cache;
        final KvTensors paged;
        final KvTensors contiguous;
        final CUdeviceptr contiguousBuffer = new CUdeviceptr();
        final GroupBlocks held;
        final List<Integer> ids = new ArrayList<>();

        Pool(Vertx vertx, DeviceMemory memory, KvFormat format, String instance) {
            shape = new AttentionShape(AttentionBenchmark.QUERY_HEADS, AttentionBenchmark.KV_HEADS,
                    AttentionBenchmark.HEAD_SIZE, AttentionBenchmark.BLOCK_TOKENS, KvDtype.BF16, format);
            int blocks = AttentionBenchmark.TOKENS / AttentionBenchmark.BLOCK_TOKENS;
            int perPage = (int) ((2L << 20) / shape.blockBytes());
            int pages = blocks / perPage + 4;
            KvCacheOptions options = new KvCacheOptions().setInstance(instance).setTp(1).setLayers(AttentionBenchmark.LAYERS)
                    .setKvBuffers(2).setBlockBytes(shape.blockBytes()).setPageBytes(2L << 20).setPages(pages)
                    .setLayout(Layout.PAGE_MAJOR).setKvDtype(format).setReserveLow(0).setReserveHigh(0)
                    .setAdaptiveReserve(false).setLocalWorkers(true).setDevice("cuda")
                    .setGpus(Map.of("pp0/tp0", 0));
            geometry = new Geometry(AttentionBenchmark.LAYERS, 2, shape.blockBytes(), 2L << 20, pages, Layout.PAGE_MAJOR);
            cache = Await.of(KvCache.deploy(vertx, options));
            held = new GroupBlocks(geometry.totalBlocks());
            ids.addAll(AttentionBenchmark.allocate(cache, blocks, held));
            paged = KvTensors.of(geometry, AttentionBenchmark.base(cache));
            // finite values everywhere: 0x3c3c is about 0.0115 in bf16; 0x3c is 1.5 in e4m3, scales 0.0115
            ids.stream().map(geometry::pageOf).distinct().forEach(page ->
                    memory.fill(paged.view(0, 0) + page * geometry.handleBytes(), geometry.handleBytes(), (byte) 0x3c));
            memory.synchronize();
            Collections.shuffle(ids, new Random(17));
            cuMemAlloc(contiguousBuffer, geometry.rangeBytes());
            cuMemsetD16(contiguousBuffer, (short) 0x3c3c, geometry.rangeBytes() / 2);
            contiguous = KvTensors.of(geometry, new DeviceBuffer(contiguousBuffer, geometry.rangeBytes()).address());
        }

        void close() {
            cuMemFree(contiguousBuffer);
            Await.of(cache.close());
        }
    }

    static Result run(Vertx vertx, int rounds, Path torchScript) {
        CUstream stream = new CUstream();
        try (DeviceMemory memory = DeviceMemory.open(0)) {
            Pool bf16 = new Pool(vertx, memory, KvFormat.BF16, "attention-bench");
            Pool fp8 = new Pool(vertx, memory, KvFormat.FP8, "attention-bench-fp8");
            try {
                return run(bf16, fp8, rounds, torchScript, stream);
            } finally {
                // the inner run synchronized and destroyed the stream
                fp8.close();
                bf16.close();
            }
        }
    }

    private static Result run(Pool bf16, Pool fp8, int rounds, Path torchScript, CUstream stream) {
        KernelCache kernels = KernelCache.nvrtc();
        cuStreamCreate(stream, 0);
        long queryBytes = bf16.shape.queryBytes(256);
        CUdeviceptr q = new CUdeviceptr();
        CUdeviceptr o = new CUdeviceptr();
        cuMemAlloc(q, queryBytes);
        cuMemAlloc(o, queryBytes);
        cuMemsetD16(q, (short) 0x3c00, queryBytes / 2);
        DeviceBuffer query = new DeviceBuffer(q, queryBytes);
        DeviceBuffer out = new DeviceBuffer(o, queryBytes);
        int[][] shapes = AttentionBenchmark.SHAPES;
        List<PagedDecodeAttention> ops = new ArrayList<>();
        List<AutoCloseable> batchesToClose = new ArrayList<>();
        try {
            // the same tables over both caches: the first blocks of the bf16 cache's shuffled ids, the fp8 cache's
            List<DecodeBatch> bf16Batches = new ArrayList<>();
            List<DecodeBatch> fp8Batches = new ArrayList<>();
            for (int[] s : shapes) {
                bf16Batches.add(AttentionBenchmark.batch(bf16.ids, s[0], s[1]));
                fp8Batches.add(AttentionBenchmark.batch(fp8.ids, s[0], s[1]));
            }
            AttentionBenchmark.Timer timer = new AttentionBenchmark.Timer(stream);
            KernelOptions defaults = KernelOptions.of(fp8.shape, fp8.geometry);
            // what an engine gets first (3 warps; for a batch they run in several waves or cut, 2 warps with a warp
            // per KV head or 16 warps); the same with 4 warps first, with the L2 prefetch hints, and with 8 warps a
            // warp per KV head (one thread block per sequence) instead of 2; then single launch shapes
            KernelOptions fourWarps = defaults.with(4, 2, 0, false, 0);
            KernelOptions sixteen = defaults.with(16, 2, 0, false, 0);
            List<LaunchShapes> tried = new ArrayList<>(List.of(LaunchShapes.perBatch(defaults), LaunchShapes.perBatch(fourWarps),
                    LaunchShapes.perBatch(defaults.with(3, 2, 128, false, 0)), LaunchShapes.perBatch(defaults.with(3, 2, 256, false, 0)),
                    new LaunchShapes(List.of(defaults, defaults.with(8, 2, 0, false, 0).withWarpPerHead(), sixteen)),
                    new LaunchShapes(List.of(defaults.with(3, 2, 256, false, 0), defaults.with(8, 2, 256, false, 0).withWarpPerHead(),
                            defaults.with(16, 2, 256, false, 0)))));
            for (KernelOptions options : List.of(defaults, fourWarps, defaults.with(3, 3, 0, false, 0), sixteen,
                    defaults.with(16, 3, 0, false, 0), defaults.with(2, 2, 0, false, 0).withWarpPerHead(),
                    fourWarps.withWarpPerHead(), defaults.with(8, 2, 0, false, 0).withWarpPerHead(),
                    defaults.with(1, 2, 0, false, 0).withWarpPerHead())) {
                tried.add(LaunchShapes.of(options));
            }
            LaunchShapes chosen = AttentionBenchmark.tuneAmong(tried, fp8.paged, kernels, fp8.held, fp8Batches, query, out,
                    stream, timer, rounds);
            PagedDecodeAttention bf16Op = PagedDecodeAttention.create(bf16.shape, bf16.paged, 0, kernels);
            ops.add(bf16Op);
            PagedDecodeAttention fp8Op = chosen.create(fp8.paged, kernels);
            ops.add(fp8Op);
            PagedDecodeAttention fp8OnBuffer = chosen.create(fp8.contiguous, kernels);
            ops.add(fp8OnBuffer);
            System.out.printf("FP8 kernel %s for %s, %d resident thread blocks/SM, %s, %d B shared%n", fp8Op.architecture(),
                    fp8.shape, fp8Op.residentPerMultiprocessor(), chosen.name(), fp8Op.options().sharedBytes());
            List<DeviceBatch[]> loaded = new ArrayList<>();
            for (int i = 0; i < shapes.length; i++) {
                DeviceBatch[] d = {bf16Op.newBatch(), fp8Op.newBatch(), fp8OnBuffer.newBatch()};
                batchesToClose.addAll(Arrays.asList(d));
                bf16Op.load(d[0], bf16Batches.get(i), bf16.held, stream);
                LaunchPlan plan = fp8Op.load(d[1], fp8Batches.get(i), fp8.held, stream);
                fp8OnBuffer.load(d[2], fp8Batches.get(i), fp8.held, stream);
                System.out.printf("FP8 B=%d S=%d: %s, %s%n", shapes[i][0], shapes[i][1], plan,
                        AttentionBenchmark.launchShape(fp8Op.launchShape(d[1])));
                loaded.add(d);
            }
            int floors = AttentionBenchmark.FLOORS.length;
            double[][][] bf16Floors = new double[floors][shapes.length][rounds];
            double[][][] fp8Floors = new double[floors][shapes.length][rounds];
            Map<Integer, List<Double>> bf16Times = new HashMap<>();
            Map<Integer, List<Double>> fp8Times = new HashMap<>();
            Map<Integer, List<Double>> fp8BufferTimes = new HashMap<>();
            Map<String, List<Double>> torch = new HashMap<>();
            try (TorchPeer peer = AttentionBenchmark.torchPeer(torchScript)) {
                for (int round = 0; round < rounds; round++) {
                    for (int i = 0; i < shapes.length; i++) {
                        DeviceBatch[] d = loaded.get(i);
                        for (int f = 0; f < floors; f++) {
                            bf16Floors[f][i][round] = floor(timer, bf16Op, d[0], f, stream);
                            fp8Floors[f][i][round] = floor(timer, fp8Op, d[1], f, stream);
                        }
                        bf16Times.computeIfAbsent(i, k -> new ArrayList<>()).add(timer.micros(() -> bf16Op.launch(d[0], 0, query, out, stream)));
                        fp8Times.computeIfAbsent(i, k -> new ArrayList<>()).add(timer.micros(() -> fp8Op.launch(d[1], 0, query, out, stream)));
                        fp8BufferTimes.computeIfAbsent(i, k -> new ArrayList<>()).add(timer.micros(() -> fp8OnBuffer.launch(d[2], 0, query, out, stream)));
                    }
                    TorchPeer.add(torch, peer.round());
                }
            }
            List<Row> rows = new ArrayList<>();
            for (int i = 0; i < shapes.length; i++) {
                Stat bf16Floor = null;
                Stat fp8Floor = null;
                String fp8FloorName = "";
                for (int f = 0; f < floors; f++) {
                    Stat b = Stat.of(Arrays.stream(bf16Floors[f][i]).boxed().toList());
                    Stat e = Stat.of(Arrays.stream(fp8Floors[f][i]).boxed().toList());
                    System.out.printf("floor B=%d %s: bf16 %.1f us (%.1f..%.1f), FP8 %.1f us (%.1f..%.1f)%n", shapes[i][0],
                            AttentionBenchmark.floorName(AttentionBenchmark.FLOORS[f]), b.median(), b.min(), b.max(),
                            e.median(), e.min(), e.max());
                    bf16Floor = bf16Floor == null || b.median() < bf16Floor.median() ? b : bf16Floor;
                    if (fp8Floor == null || e.median() < fp8Floor.median()) {
                        fp8Floor = e;
                        fp8FloorName = AttentionBenchmark.floorName(AttentionBenchmark.FLOORS[f]);
                    }
                }
                List<Double> torchRounds = torch.get(shapes[i][0] + "x" + shapes[i][1]);
                rows.add(new Row(shapes[i][0], shapes[i][1], fp8Batches.get(i).kvBytes(fp8.shape),
                        bf16Batches.get(i).kvBytes(bf16.shape), fp8Floor, fp8FloorName, Stat.of(fp8Times.get(i)),
                        Stat.of(fp8BufferTimes.get(i)), bf16Floor, Stat.of(bf16Times.get(i)),
                        torchRounds == null ? null : Stat.of(torchRounds)));
            }
            List<AppendRow> appends = appends(fp8Op, fp8, timer, rounds, stream);
            return new Result(rows, appends, chosen.name());
        } finally {
            cuStreamSynchronize(stream);
            for (AutoCloseable c : batchesToClose) {
                try {
                    c.close();
                } catch (Exception e) {
                    throw new IllegalStateException(e);
                }
            }
            ops.forEach(PagedDecodeAttention::close);
            cuMemFree(q);
            cuMemFree(o);
            cuStreamDestroy(stream);
        }
    }

    private static double floor(Timer timer, PagedDecodeAttention op, DeviceBatch batch, int f, CUstream stream) {
        int[] floor = AttentionBenchmark.FLOORS[f];
        return timer.micros(() -> {
            if (floor[0] == 0) {
                op.launchReadFloor(batch, 0, stream);
            } else {
                op.launchBulkReadFloor(batch, 0, floor[0], floor[1], floor[2], stream);
            }
        });
    }

    /** The append and its write floor, alternating, over random bf16 K and V into shuffled slots; after the decode rounds. */
    private static List<AppendRow> appends(PagedDecodeAttention op, Pool pool, Timer timer, int rounds, CUstream stream) {
        AttentionShape shape = pool.shape;
        long rowElements = (long) shape.kvHeads() * shape.headSize();
        long bytes = APPEND_TOKENS * rowElements * 2;
        CUdeviceptr k = new CUdeviceptr();
        CUdeviceptr v = new CUdeviceptr();
        cuMemAlloc(k, bytes);
        cuMemAlloc(v, bytes);
        try (AppendSlots big = op.newAppendSlots(); AppendSlots step = op.newAppendSlots()) {
            short[] chunk = new short[4 << 20];
            SplittableRandom random = new SplittableRandom(5);
            for (int i = 0; i < chunk.length; i++) {
                chunk[i] = KvDtype.BF16.encode((float) random.nextDouble(-1, 1));
            }
            for (long at = 0; at < bytes; at += chunk.length * 2L) {
                long n = Math.min(chunk.length * 2L, bytes - at);
                cuMemcpyHtoD(k.withByteOffset(at), Pointer.to(chunk), n);
                cuMemcpyHtoD(v.withByteOffset(at), Pointer.to(chunk), n);
            }
            int bt = shape.blockTokens();
            long[] slots = new long[APPEND_TOKENS];
            for (int t = 0; t < APPEND_TOKENS; t++) {
                slots[t] = (long) pool.ids.get(t / bt) * bt + t % bt;
            }
            // a decode step: one new token for each of 64 sequences, each at the end of its own block
            long[] stepSlots = new long[64];
            for (int s = 0; s < stepSlots.length; s++) {
                stepSlots[s] = (long) pool.ids.get(APPEND_TOKENS / bt + s) * bt + (s % bt);
            }
            op.load(big, slots, pool.held, stream);
            op.load(step, stepSlots, pool.held, stream);
            DeviceBuffer keys = new DeviceBuffer(k, bytes);
            DeviceBuffer values = new DeviceBuffer(v, bytes);
            List<AppendRow> rows = new ArrayList<>();
            for (AppendSlots slotsOf : List.of(big, step)) {
                List<Double> floor = new ArrayList<>();
                List<Double> append = new ArrayList<>();
                for (int round = 0; round < rounds; round++) {
                    floor.add(timer.micros(() -> op.launchAppendFloor(slotsOf, 0, keys, values, stream)));
                    append.add(timer.micros(() -> op.launchAppend(slotsOf, 0, keys, values, stream)));
                }
                // bytes moved: bf16 K and V read, e4m3 elements and fp32 scales written
                long moved = (long) slotsOf.tokens() * 2 * (rowElements * 2 + shape.tokenBytesWithScales());
                rows.add(new AppendRow(slotsOf.tokens(), moved, Stat.of(floor), Stat.of(append)));
            }
            cuStreamSynchronize(stream);
            return rows;
        } finally {
            cuMemFree(k);
            cuMemFree(v);
        }
    }

    /** The rows as the report's markdown tables, each under a line that says what it is. */
    static List<String> table(Result result, int rounds) {
        List<String> lines = new ArrayList<>();
        lines.add(String.format("decode attention over FP8 (e4m3, a scale per token and KV head) and bf16 pages, Hq %d, Hkv %d, "
                        + "D %d, %d-token blocks, PAGE_MAJOR %d layers; FP8 launch shape: %s; median us per launch over %d "
                        + "alternating rounds of %d launches (min..max); TB/s = K+V bytes (with scales) / time",
                AttentionBenchmark.QUERY_HEADS, AttentionBenchmark.KV_HEADS, AttentionBenchmark.HEAD_SIZE,
                AttentionBenchmark.BLOCK_TOKENS, AttentionBenchmark.LAYERS, result.fp8LaunchShape(), rounds,
                AttentionBenchmark.LAUNCHES));
        lines.add("| B | S | FP8 MiB | FP8 read floor | FP8 pages | FP8 one buffer | bf16 floor | bf16 pages | torch SDPA bf16 "
                + "| FP8 floor / FP8 pages | bf16 pages / FP8 pages | torch / FP8 pages |");
        lines.add("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |");
        for (Row r : result.rows()) {
            lines.add(String.format("| %d | %d | %d | %s | %s | %s | %s | %s | %s | %.2f | %.2fx | %s |", r.batch(), r.sequence(),
                    r.fp8Bytes() >> 20, cell(r.fp8Bytes(), r.fp8Floor()), cell(r.fp8Bytes(), r.fp8Pages()),
                    cell(r.fp8Bytes(), r.fp8Buffer()), cell(r.bf16Bytes(), r.bf16Floor()), cell(r.bf16Bytes(), r.bf16Pages()),
                    cell(r.bf16Bytes(), r.torch()), r.fp8Floor().median() / r.fp8Pages().median(),
                    r.bf16Pages().median() / r.fp8Pages().median(),
                    r.torch() == null ? "n/a" : String.format("%.2fx", r.torch().median() / r.fp8Pages().median())));
        }
        lines.add("");
        lines.add("append of new tokens' bf16 K and V into FP8 pages (kv_append_fp8) against its write floor (the same loads "
                + "and stores, nothing computed); TB/s = bytes read + written / time");
        lines.add("| tokens | MiB moved | write floor | append | floor / append |");
        lines.add("| --- | --- | --- | --- | --- |");
        for (AppendRow a : result.appends()) {
            lines.add(String.format("| %d | %.1f | %s | %s | %.2f |", a.tokens(), a.bytes() / 1048576.0, cell(a.bytes(), a.floor()),
                    cell(a.bytes(), a.append()), a.floor().median() / a.append().median()));
        }
        return lines;
    }

    private static String cell(long bytes, Stat s) {
        if (s == null) {
            return "n/a";
        }
        return String.format("%.1f us (%.1f..%.1f) %.2f TB/s", s.median(), s.min(), s.max(), bytes / (s.median() * 1e-6) / 1e12);
    }
}
