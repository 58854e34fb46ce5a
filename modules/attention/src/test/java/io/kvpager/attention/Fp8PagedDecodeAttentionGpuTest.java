package io.kvpager.attention;

import static jcuda.driver.JCudaDriver.cuMemAlloc;
import static jcuda.driver.JCudaDriver.cuMemFree;
import static jcuda.driver.JCudaDriver.cuMemcpyDtoH;
import static jcuda.driver.JCudaDriver.cuMemcpyHtoD;
import static jcuda.driver.JCudaDriver.cuStreamCreate;
import static jcuda.driver.JCudaDriver.cuStreamDestroy;
import static jcuda.driver.JCudaDriver.cuStreamSynchronize;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.kvpager.Geometry;
import io.kvpager.KvFormat;
import io.kvpager.Layout;
import io.kvpager.spi.Device;
import io.kvpager.spi.DeviceFactory;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.stream.IntStream;
import java.util.stream.Stream;
import jcuda.Pointer;
import jcuda.driver.CUdeviceptr;
import jcuda.driver.CUstream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * FP8 pages on a real GPU: {@code paged_decode} over e4m3 blocks and their scales against
 * {@link ReferenceAttention} in double precision over the same quantized values (both layouts,
 * head sizes 64, 128 and 256, 1, 4, 8 and 16 query heads per KV head, partial blocks, split
 * sequences, shuffled tables, a shared prefix, several launch shapes); {@code kv_append_fp8}
 * writing exactly the bytes and scales {@link E4m3#quantize} computes, at the slots the tables
 * name; attention over appended pages against bf16 attention of the unquantized values (cosine
 * similarity at least 0.999, uniform and heavy-tailed data); bad input refused before launch.
 *
 * <p>Tolerance against the reference of the quantized values: as for bf16 pages (the e4m3 values
 * are exact in bf16; the kernel rounds the scaled softmax weights and the output to bf16), 2⁻⁷
 * of the largest |V|.
 */
@Tag("gpu")
class Fp8PagedDecodeAttentionGpuTest {

    private static final int LAYERS = 3;
    private static final int LAYER = 1;

    private static Device device;
    private static KernelCache cache;
    private CUstream stream;

    @BeforeAll
    static void open() {
        if (OnGpuWithNvrtc.unavailableReason().isEmpty()) {
            device = DeviceFactory.forKind("cuda").open(0, "attention-fp8-test", Map.of());
            device.attach();
            cache = new KernelCache(Nvrtc::compile, Nvrtc.version(), null);
        }
    }

    @AfterAll
    static void close() {
        if (device != null) {
            device.close();
        }
    }

    @BeforeEach
    void needsGpu() {
        OnGpuWithNvrtc.assume();
        device.attach();
        stream = new CUstream();
    }

    static Stream<Arguments> shapes() {
        List<Arguments> all = new ArrayList<>();
        for (Layout layout : Layout.values()) {
            all.add(Arguments.of(new AttentionShape(4, 4, 64, 32, KvDtype.BF16, KvFormat.FP8), layout));
            all.add(Arguments.of(new AttentionShape(8, 2, 128, 16, KvDtype.BF16, KvFormat.FP8), layout));
            all.add(Arguments.of(new AttentionShape(16, 2, 256, 8, KvDtype.BF16, KvFormat.FP8), layout));
        }
        all.add(Arguments.of(new AttentionShape(16, 1, 128, 16, KvDtype.BF16, KvFormat.FP8), Layout.PAGE_MAJOR));
        all.add(Arguments.of(new AttentionShape(32, 8, 128, 32, KvDtype.BF16, KvFormat.FP8), Layout.PAGE_MAJOR));
        return all.stream();
    }

    @ParameterizedTest(name = "{0} {1}")
    @MethodSource("shapes")
    void matchesTheDoublePrecisionReferenceOfTheQuantizedValues(AttentionShape shape, Layout layout) {
        SplittableRandom random = new SplittableRandom(shape.hashCode() * 31L + layout.ordinal());
        int bt = shape.blockTokens();
        int[] lengths = {1, bt, bt + 1, 3 * bt, 700, 2500, 2500};
        int blocksNeeded = Arrays.stream(lengths).map(l -> (l + bt - 1) / bt).sum();
        Geometry geometry = new Geometry(LAYERS, 2, shape.blockBytes(), 2L << 20,
                (blocksNeeded + 255) / (int) ((2L << 20) / shape.blockBytes()) + 2, layout);
        try (MappedPool pool = new MappedPool(device, geometry, random)) {
            List<Integer> ids = new ArrayList<>();
            for (int b = 0; b < geometry.totalBlocks(); b++) {
                ids.add(b);
            }
            Collections.shuffle(ids, new java.util.Random(random.nextLong()));
            GroupBlocks held = new GroupBlocks(geometry.totalBlocks());
            int[][] tables = new int[lengths.length][];
            int next = 0;
            for (int s = 0; s < lengths.length; s++) {
                tables[s] = new int[(lengths[s] + bt - 1) / bt];
                int shared = s == lengths.length - 1 ? tables[s - 1].length / 2 : 0;
                for (int k = 0; k < tables[s].length; k++) {
                    tables[s][k] = k < shared ? tables[s - 1][k] : ids.get(next++);
                }
                held.add(Arrays.stream(tables[s], shared, tables[s].length).toArray());
            }
            for (int b = 0; b < geometry.totalBlocks(); b++) {
                for (int buffer = 0; buffer < 2; buffer++) {
                    for (int t = 0; t < bt; t++) {
                        for (int h = 0; h < shape.kvHeads(); h++) {
                            float[] row = new float[shape.headSize()];
                            for (int d = 0; d < row.length; d++) {
                                row[d] = Fp8Data.bf16(random.nextDouble(-1, 1));
                            }
                            writeRow(pool, shape, buffer, b, t, h, row);
                        }
                    }
                }
            }
            pool.upload();
            DecodeBatch batch = DecodeBatch.of(tables, lengths);
            double[][][] query = new double[lengths.length][shape.queryHeads()][shape.headSize()];
            short[] queryBits = randomQueries(shape, query, random);
            double[][][] expected = ReferenceAttention.compute(shape, batch, query, dequantized(pool, shape));
            KernelOptions defaults = KernelOptions.of(shape, geometry);
            List<KernelOptions> variants = new ArrayList<>(List.of(defaults, defaults.portable(), defaults.with(4, 3, 0, false, 0),
                    defaults.with(3, 2, 256, false, 0)));
            for (int warps : new int[] {1, 2, 3, 4, 8}) {
                variants.add(defaults.with(warps, 2, 0, false, 0).withWarpPerHead());
            }
            for (int warps : new int[] {4, 6, 16}) {
                try {
                    variants.add(defaults.with(warps, 2, 0, false, 0));
                } catch (IllegalArgumentException tooMuchSharedMemory) {
                    // 6 and 16 warps of head size 256 need more shared memory than a thread block may have
                }
            }
            for (KernelOptions options : variants) {
                short[] out = run(options, pool.tensors, batch, held, queryBits);
                double worst = worstError(out, expected);
                String name = "chunked " + options.warps() + "w" + options.stages() + "s" + (options.warpPerHead() ? " warp/head" : "")
                        + (options.l2Prefetch() > 0 ? " L2 " + options.l2Prefetch() : "");
                System.out.printf("attention FP8 %s %s %s: max |error| %.2e (tolerance %.2e)%n", shape, layout, name, worst,
                        0x1p-7);
                assertThat(worst).as(name).isLessThanOrEqualTo(0x1p-7);
            }
        }
    }

    /**
     * The default runs many short sequences with a warp per KV head and few long ones with 16 warps
     * per thread block, each whole in one wave where its own launch shape would run several waves
     * or cut and merge (sized from the GPU's multiprocessors: two sequences of 8 KV heads per
     * multiprocessor, 16 (sequence, KV head) pairs; one sequence per 8 multiprocessors), and both
     * match the reference: every output written, and every 7th sequence's (and the last's) against
     * the double-precision reference. Every sequence reads one shared table, so few blocks are
     * filled.
     */
    @ParameterizedTest(name = "many short sequences: {0}")
    @ValueSource(booleans = {true, false})
    void theDefaultRunsManyShortOrFewLongSequencesWholeInOneWave(boolean many) {
        AttentionShape shape = new AttentionShape(32, 8, 128, 16, KvDtype.BF16, KvFormat.FP8);
        int bt = shape.blockTokens();
        int longest = many ? 512 : 4096;
        Geometry geometry = new Geometry(LAYERS, 2, shape.blockBytes(), 2L << 20, 4, Layout.PAGE_MAJOR);
        SplittableRandom random = new SplittableRandom(many ? 256 : 16);
        try (MappedPool pool = new MappedPool(device, geometry, random);
             PagedDecodeAttention attention = PagedDecodeAttention.create(shape, pool.tensors, 0, cache);
             DeviceBatch deviceBatch = attention.newBatch()) {
            int sequences = many ? 2 * attention.multiprocessors() : attention.multiprocessors() / shape.kvHeads();
            int[] table = new int[longest / bt];
            for (int k = 0; k < table.length; k++) {
                table[k] = (k * 37) % geometry.totalBlocks();
            }
            GroupBlocks held = new GroupBlocks(geometry.totalBlocks());
            held.add(table);
            for (int block : table) {
                for (int buffer = 0; buffer < 2; buffer++) {
                    for (int t = 0; t < bt; t++) {
                        for (int h = 0; h < shape.kvHeads(); h++) {
                            float[] row = new float[shape.headSize()];
                            for (int d = 0; d < row.length; d++) {
                                row[d] = Fp8Data.bf16(random.nextDouble(-1, 1));
                            }
                            writeRow(pool, shape, buffer, block, t, h, row);
                        }
                    }
                }
            }
            pool.upload();
            int[][] tables = new int[sequences][];
            int[] lengths = new int[sequences];
            for (int s = 0; s < sequences; s++) {
                tables[s] = table;
                lengths[s] = longest - s % 16;
            }
            DecodeBatch batch = DecodeBatch.of(tables, lengths);
            SplitPlan own = SplitPlan.waves(batch, shape.kvHeads(), attention.multiprocessors() * attention.residentPerMultiprocessor());
            assertThat(own.isOneWhole(batch, shape.kvHeads(), attention.multiprocessors() * attention.residentPerMultiprocessor()))
                    .as("the default launch shape alone needs several waves or a merge").isFalse();
            double[][][] query = new double[sequences][shape.queryHeads()][shape.headSize()];
            short[] queryBits = randomQueries(shape, query, random);
            long bytes = shape.queryBytes(sequences);
            CUdeviceptr q = alloc(bytes);
            CUdeviceptr o = alloc(bytes);
            short[] out = new short[queryBits.length];
            cuStreamCreate(stream, 0);
            try {
                cuMemcpyHtoD(q, Pointer.to(queryBits), bytes);
                short[] poison = new short[queryBits.length];
                Arrays.fill(poison, (short) 0x7fc0);
                cuMemcpyHtoD(o, Pointer.to(poison), bytes);
                LaunchPlan plan = attention.load(deviceBatch, batch, held, stream);
                KernelOptions chosen = attention.launchShape(deviceBatch);
                System.out.printf("attention FP8 default, %d sequences of up to %d tokens: %s, %d warps%s%n", sequences, longest,
                        plan, chosen.warps(), chosen.warpPerHead() ? " (a warp per KV head)" : "");
                if (many) {
                    assertThat(chosen.warpPerHead()).as("a warp per KV head runs it").isTrue();
                } else {
                    assertThat(chosen.warps()).as("16 warps per thread block run it").isEqualTo(KernelOptions.MAX_WARPS);
                    assertThat(chosen.warpPerHead()).isFalse();
                }
                assertThat(((SplitPlan) plan).maxSplits()).as("whole: no merge pass").isEqualTo(1);
                attention.launch(deviceBatch, LAYER, new DeviceBuffer(q, bytes), new DeviceBuffer(o, bytes), stream);
                cuStreamSynchronize(stream);
                cuMemcpyDtoH(Pointer.to(out), o, bytes);
            } finally {
                cuMemFree(q);
                cuMemFree(o);
                cuStreamDestroy(stream);
            }
            for (short element : out) {
                assertThat(Double.isFinite(KvDtype.BF16.decode(element))).as("every output written").isTrue();
            }
            int[] checked = IntStream.range(0, sequences).filter(s -> s % 7 == 0 || s == sequences - 1).toArray();
            int[][] checkedTables = new int[checked.length][];
            int[] checkedLengths = new int[checked.length];
            double[][][] checkedQuery = new double[checked.length][][];
            int headValues = shape.queryHeads() * shape.headSize();
            short[] checkedOut = new short[checked.length * headValues];
            for (int i = 0; i < checked.length; i++) {
                checkedTables[i] = tables[checked[i]];
                checkedLengths[i] = lengths[checked[i]];
                checkedQuery[i] = query[checked[i]];
                System.arraycopy(out, checked[i] * headValues, checkedOut, i * headValues, headValues);
            }
            double worst = worstError(checkedOut, ReferenceAttention.compute(shape, DecodeBatch.of(checkedTables, checkedLengths),
                    checkedQuery, dequantized(pool, shape)));
            System.out.printf("attention FP8 default, %d sequences (%d checked): max |error| %.2e (tolerance %.2e)%n", sequences,
                    checked.length, worst, 0x1p-7);
            assertThat(worst).isLessThanOrEqualTo(0x1p-7);
        }
    }

    /**
     * Tokens appended by the kernel, a prefill of all but the last token of every sequence and then
     * one decode step, land as the CPU quantizer writes them, and attention over them is within
     * 0.999 cosine similarity of bf16 attention over the values before quantization.
     */
    @ParameterizedTest(name = "heavy-tailed {0}")
    @ValueSource(booleans = {false, true})
    void appendedTokensAreTheQuantizersAndAttentionOverThemTracksBf16(boolean heavyTailed) {
        AttentionShape shape = new AttentionShape(32, 8, 128, 16, KvDtype.BF16, KvFormat.FP8);
        int bt = shape.blockTokens();
        int[] lengths = {1000, 1537, 64, 3001};
        int total = Arrays.stream(lengths).sum();
        int blocksNeeded = Arrays.stream(lengths).map(l -> (l + bt - 1) / bt).sum();
        Geometry geometry = new Geometry(LAYERS, 2, shape.blockBytes(), 2L << 20,
                blocksNeeded / (int) ((2L << 20) / shape.blockBytes()) + 2, Layout.PAGE_MAJOR);
        SplittableRandom random = new SplittableRandom(heavyTailed ? 41 : 43);
        float[][][][] kv = new float[2][][][];
        for (int b = 0; b < 2; b++) {
            kv[b] = heavyTailed ? Fp8Data.heavyTailed(total, shape.kvHeads(), shape.headSize(), random)
                    : Fp8Data.uniform(total, shape.kvHeads(), shape.headSize(), random);
        }
        try (MappedPool pool = new MappedPool(device, geometry, random);
             PagedDecodeAttention attention = PagedDecodeAttention.create(shape, pool.tensors, 0, cache);
             AppendSlots slots = attention.newAppendSlots();
             DeviceBatch deviceBatch = attention.newBatch()) {
            pool.upload();
            List<Integer> ids = new ArrayList<>();
            for (int b = 0; b < geometry.totalBlocks(); b++) {
                ids.add(b);
            }
            Collections.shuffle(ids, new java.util.Random(random.nextLong()));
            GroupBlocks held = new GroupBlocks(geometry.totalBlocks());
            int[][] tables = new int[lengths.length][];
            int[] firstToken = new int[lengths.length];
            int next = 0;
            for (int s = 0; s < lengths.length; s++) {
                tables[s] = new int[(lengths[s] + bt - 1) / bt];
                for (int k = 0; k < tables[s].length; k++) {
                    tables[s][k] = ids.get(next++);
                }
                held.add(tables[s]);
                firstToken[s] = s == 0 ? 0 : firstToken[s - 1] + lengths[s - 1];
            }
            cuStreamCreate(stream, 0);
            try {
                // prefill: every token but each sequence's last; then one decode step: the last ones
                appendTokens(attention, slots, held, kv, tables, lengths, firstToken, 0, -1);
                appendTokens(attention, slots, held, kv, tables, lengths, firstToken, -1, 0);
                cuStreamSynchronize(stream);
                pool.download();
                int mismatches = 0;
                byte[] codes = new byte[shape.headSize()];
                for (int s = 0; s < lengths.length; s++) {
                    for (int t = 0; t < lengths[s]; t++) {
                        int block = tables[s][t / bt];
                        for (int buffer = 0; buffer < 2; buffer++) {
                            for (int h = 0; h < shape.kvHeads(); h++) {
                                float scale = E4m3.quantize(kv[buffer][firstToken[s] + t][h], 0, shape.headSize(), codes, 0);
                                if (Float.floatToRawIntBits(scale) != Float.floatToRawIntBits(
                                        pool.getFloat(LAYER, buffer, block, shape.scaleOffsetInBlock(t % bt, h)))) {
                                    mismatches++;
                                }
                                for (int d = 0; d < shape.headSize(); d++) {
                                    if (codes[d] != pool.getByte(LAYER, buffer, block, shape.offsetInBlock(t % bt, h, d))) {
                                        mismatches++;
                                    }
                                }
                            }
                        }
                    }
                }
                assertThat(mismatches).as("bytes and scales that differ from the CPU quantizer's").isZero();

                DecodeBatch batch = DecodeBatch.of(tables, lengths);
                double[][][] query = new double[lengths.length][shape.queryHeads()][shape.headSize()];
                short[] queryBits = randomQueries(shape, query, random);
                long bytes = shape.queryBytes(lengths.length);
                CUdeviceptr q = alloc(bytes);
                CUdeviceptr o = alloc(bytes);
                short[] out = new short[queryBits.length];
                try {
                    cuMemcpyHtoD(q, Pointer.to(queryBits), bytes);
                    attention.load(deviceBatch, batch, held, stream);
                    attention.launch(deviceBatch, LAYER, new DeviceBuffer(q, bytes), new DeviceBuffer(o, bytes), stream);
                    cuStreamSynchronize(stream);
                    cuMemcpyDtoH(Pointer.to(out), o, bytes);
                } finally {
                    cuMemFree(q);
                    cuMemFree(o);
                }
                double[][][] quantized = ReferenceAttention.compute(shape, batch, query, dequantized(pool, shape));
                double[][][] bf16 = ReferenceAttention.compute(shape, batch, query,
                        (buffer, block, token, head, dim) -> kv[buffer][firstToken[sequenceOf(tables, block)]
                                + positionOf(tables, block) * bt + token][head][dim]);
                double maxV = Arrays.stream(kv[1]).flatMap(Arrays::stream).flatMapToDouble(r -> IntStream.range(0, r.length)
                        .mapToDouble(i -> Math.abs(r[i]))).max().orElseThrow();
                double[][][] gpu = new double[lengths.length][shape.queryHeads()][shape.headSize()];
                int i = 0;
                for (double[][] sequence : gpu) {
                    for (double[] head : sequence) {
                        for (int d = 0; d < head.length; d++) {
                            head[d] = KvDtype.BF16.decode(out[i++]);
                        }
                    }
                }
                Fp8AccuracyTest.Error againstQuantized = Fp8AccuracyTest.error(gpu, quantized);
                Fp8AccuracyTest.Error againstBf16 = Fp8AccuracyTest.error(gpu, bf16);
                System.out.printf("appended FP8 pages, %s data (max |V| %.1f): GPU vs the reference of the quantized values %s; "
                        + "GPU vs bf16 attention %s%n", heavyTailed ? "heavy-tailed" : "uniform", maxV, againstQuantized, againstBf16);
                assertThat(againstQuantized.maxAbs()).isLessThanOrEqualTo(0x1p-7 * maxV);
                assertThat(againstBf16.cosine()).isGreaterThanOrEqualTo(0.999);
            } finally {
                cuStreamDestroy(stream);
            }
        }
    }

    @Test
    void badInputIsRefusedBeforeLaunchAndChangesNothing() {
        AttentionShape fp8 = new AttentionShape(8, 2, 128, 16, KvDtype.BF16, KvFormat.FP8);
        AttentionShape bf16 = fp8.withKv(KvFormat.BF16);
        // blocks sized for the e4m3 elements alone: no room for the scales
        Geometry noScales = new Geometry(2, 2, fp8.blockDataBytes(), 2L << 20, 2, Layout.PAGE_MAJOR);
        try (MappedPool pool = new MappedPool(device, noScales, new SplittableRandom(3))) {
            assertThatThrownBy(() -> PagedDecodeAttention.create(fp8, pool.tensors, 0, cache))
                    .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("scales");
        }
        Geometry geometry = new Geometry(2, 2, fp8.blockBytes(), 2L << 20, 2, Layout.PAGE_MAJOR);
        try (MappedPool pool = new MappedPool(device, geometry, new SplittableRandom(5));
             PagedDecodeAttention attention = PagedDecodeAttention.create(fp8, pool.tensors, 0, cache);
             AppendSlots slots = attention.newAppendSlots()) {
            pool.upload();
            GroupBlocks held = new GroupBlocks(geometry.totalBlocks());
            held.add(3, 4);
            long bytes = 2L * fp8.kvHeads() * fp8.headSize() * 2;
            CUdeviceptr k = alloc(bytes);
            CUdeviceptr v = alloc(bytes);
            cuStreamCreate(stream, 0);
            try {
                DeviceBuffer keys = new DeviceBuffer(k, bytes);
                DeviceBuffer values = new DeviceBuffer(v, bytes);
                assertThatThrownBy(() -> attention.launchAppend(slots, 0, keys, values, stream))
                        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("no slots loaded");
                assertThatThrownBy(() -> attention.load(slots, new long[] {3 * 16, 5 * 16}, held, stream))
                        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("block 5, which is not allocated");
                assertThatThrownBy(() -> attention.load(slots, new long[] {3 * 16 + 2, 3 * 16 + 2}, held, stream))
                        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("again");
                assertThat(slots.tokens()).as("nothing loaded").isZero();
                attention.load(slots, new long[] {3 * 16, 4 * 16 + 15}, held, stream);
                assertThatThrownBy(() -> attention.launchAppend(slots, 0, new DeviceBuffer(k, bytes - 2), values, stream))
                        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("keys buffer holds " + (bytes - 2));
                assertThatThrownBy(() -> attention.launchAppend(slots, 2, keys, values, stream))
                        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("layer 2 is outside 0..1");
                cuStreamSynchronize(stream);
                byte[] before = pool.snapshot();
                pool.download();
                assertThat(pool.snapshot()).as("pages untouched").isEqualTo(before);
            } finally {
                cuMemFree(k);
                cuMemFree(v);
                cuStreamDestroy(stream);
            }
        }
        Geometry bf16Geometry = new Geometry(2, 2, bf16.blockBytes(), 2L << 20, 2, Layout.PAGE_MAJOR);
        try (MappedPool pool = new MappedPool(device, bf16Geometry, new SplittableRandom(7));
             PagedDecodeAttention attention = PagedDecodeAttention.create(bf16, pool.tensors, 0, cache);
             AppendSlots slots = attention.newAppendSlots()) {
            GroupBlocks held = new GroupBlocks(bf16Geometry.totalBlocks());
            held.add(1);
            cuStreamCreate(stream, 0);
            try {
                attention.load(slots, new long[] {16}, held, stream);
                DeviceBuffer none = new DeviceBuffer(new CUdeviceptr(), 0);
                assertThatThrownBy(() -> attention.launchAppend(slots, 0, none, none, stream))
                        .isInstanceOf(IllegalStateException.class).hasMessageContaining("FP8 pages");
                cuStreamSynchronize(stream);
            } finally {
                cuStreamDestroy(stream);
            }
            // an FP8 operation over these bf16 blocks: the block size gives it away
            assertThatThrownBy(() -> PagedDecodeAttention.create(fp8, pool.tensors, 0, cache))
                    .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("FP8 e4m3");
        }
    }

    /** Appends, for each sequence, tokens {@code from .. length + to - 1} (from -1: the last token alone). */
    private void appendTokens(PagedDecodeAttention attention, AppendSlots slots, GroupBlocks held, float[][][][] kv,
                              int[][] tables, int[] lengths, int[] firstToken, int from, int to) {
        AttentionShape shape = attention.shape();
        int bt = shape.blockTokens();
        List<Integer> sequenceOf = new ArrayList<>();
        List<Integer> tokenOf = new ArrayList<>();
        for (int s = 0; s < lengths.length; s++) {
            int begin = from < 0 ? lengths[s] - 1 : from;
            for (int t = begin; t < lengths[s] + to; t++) {
                sequenceOf.add(s);
                tokenOf.add(t);
            }
        }
        int tokens = sequenceOf.size();
        int row = shape.kvHeads() * shape.headSize();
        short[][] bits = new short[2][tokens * row];
        long[] slotIds = new long[tokens];
        for (int i = 0; i < tokens; i++) {
            int s = sequenceOf.get(i);
            int t = tokenOf.get(i);
            slotIds[i] = (long) tables[s][t / bt] * bt + t % bt;
            for (int buffer = 0; buffer < 2; buffer++) {
                for (int h = 0; h < shape.kvHeads(); h++) {
                    for (int d = 0; d < shape.headSize(); d++) {
                        bits[buffer][i * row + h * shape.headSize() + d] = KvDtype.BF16.encode(kv[buffer][firstToken[s] + t][h][d]);
                    }
                }
            }
        }
        long bytes = (long) tokens * row * 2;
        CUdeviceptr k = alloc(bytes);
        CUdeviceptr v = alloc(bytes);
        try {
            cuMemcpyHtoD(k, Pointer.to(bits[0]), bytes);
            cuMemcpyHtoD(v, Pointer.to(bits[1]), bytes);
            attention.load(slots, slotIds, held, stream);
            attention.launchAppend(slots, LAYER, new DeviceBuffer(k, bytes), new DeviceBuffer(v, bytes), stream);
            cuStreamSynchronize(stream);
        } finally {
            cuMemFree(k);
            cuMemFree(v);
        }
    }

    private static int sequenceOf(int[][] tables, int block) {
        for (int s = 0; s < tables.length; s++) {
            for (int b : tables[s]) {
                if (b == block) {
                    return s;
                }
            }
        }
        throw new IllegalArgumentException("block " + block + " is in no table");
    }

    private static int positionOf(int[][] tables, int block) {
        int[] table = tables[sequenceOf(tables, block)];
        for (int k = 0; k < table.length; k++) {
            if (table[k] == block) {
                return k;
            }
        }
        throw new IllegalArgumentException("block " + block + " is in no table");
    }

    /** Quantizes {@code row} as the append kernel does and writes it with its scale into the host image of layer {@link #LAYER}. */
    private static void writeRow(MappedPool pool, AttentionShape shape, int buffer, int block, int token, int head, float[] row) {
        byte[] codes = new byte[row.length];
        float scale = E4m3.quantize(row, 0, row.length, codes, 0);
        for (int d = 0; d < row.length; d++) {
            pool.setByte(LAYER, buffer, block, shape.offsetInBlock(token, head, d), codes[d]);
        }
        pool.setFloat(LAYER, buffer, block, shape.scaleOffsetInBlock(token, head), scale);
    }

    /** The values the host image's FP8 blocks of layer {@link #LAYER} stand for. */
    private static ReferenceAttention.Blocks dequantized(MappedPool pool, AttentionShape shape) {
        return (buffer, block, token, head, dim) -> E4m3.decode(pool.getByte(LAYER, buffer, block, shape.offsetInBlock(token, head, dim)))
                * pool.getFloat(LAYER, buffer, block, shape.scaleOffsetInBlock(token, head));
    }

    private static double worstError(short[] out, double[][][] expected) {
        double worst = 0;
        int i = 0;
        for (double[][] sequence : expected) {
            for (double[] head : sequence) {
                for (double value : head) {
                    double error = Math.abs(KvDtype.BF16.decode(out[i++]) - value);
                    if (!(error <= worst)) {
                        worst = error;
                    }
                }
            }
        }
        return worst;
    }

    private short[] run(KernelOptions options, KvTensors tensors, DecodeBatch batch, GroupBlocks held, short[] queryBits) {
        long bytes = options.shape().queryBytes(batch.sequences());
        CUstream own = new CUstream();
        cuStreamCreate(own, 0);
        CUdeviceptr q = alloc(bytes);
        CUdeviceptr o = alloc(bytes);
        try (PagedDecodeAttention attention = PagedDecodeAttention.create(options, tensors, 0, cache);
             DeviceBatch deviceBatch = attention.newBatch()) {
            cuMemcpyHtoD(q, Pointer.to(queryBits), bytes);
            short[] poison = new short[queryBits.length];
            Arrays.fill(poison, (short) 0x7fc0);
            cuMemcpyHtoD(o, Pointer.to(poison), bytes);
            LaunchPlan plan = attention.load(deviceBatch, batch, held, own);
            assertThat(((SplitPlan) plan).maxSplits()).as("the long sequences are split").isGreaterThan(1);
            attention.launch(deviceBatch, LAYER, new DeviceBuffer(q, bytes), new DeviceBuffer(o, bytes), own);
            cuStreamSynchronize(own);
            short[] out = new short[queryBits.length];
            cuMemcpyDtoH(Pointer.to(out), o, bytes);
            return out;
        } finally {
            cuMemFree(q);
            cuMemFree(o);
            cuStreamDestroy(own);
        }
    }

    private static short[] randomQueries(AttentionShape shape, double[][][] query, SplittableRandom random) {
        short[] bits = new short[(int) (shape.queryBytes(query.length) / 2)];
        int i = 0;
        for (double[][] sequence : query) {
            for (double[] head : sequence) {
                for (int d = 0; d < head.length; d++) {
                    short element = KvDtype.BF16.encode((float) random.nextDouble(-4, 4));
                    head[d] = KvDtype.BF16.decode(element);
                    bits[i++] = element;
                }
            }
        }
        return bits;
    }

    private static CUdeviceptr alloc(long bytes) {
        CUdeviceptr pointer = new CUdeviceptr();
        cuMemAlloc(pointer, bytes);
        return pointer;
    }
}
