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

/**
 * The kernel on a real GPU against {@link ReferenceAttention} in double precision, over pages
 * mapped as a rank worker maps them: both layouts, both element types, head sizes 64, 128 and 256
 * with 1, 4 and 8 query heads per KV head, lengths of 1 token, exactly full blocks and one token
 * past a block, long sequences split over many thread blocks, block tables shuffled across the
 * pool and a prefix of blocks shared by two sequences. The layer read is layer 1 of 3, and every
 * byte it should not read is random.
 *
 * <p>Tolerance: the kernel rounds the softmax weights to the element type before multiplying them
 * with V and rounds the output to it, each a relative error of at most 2⁻⁹ (bf16) or 2⁻¹¹
 * (fp16) of an output bounded by max|V| = 1; the test allows four times that: 2⁻⁷ for bf16,
 * 2⁻⁹ for fp16, absolute.
 */
@Tag("gpu")
class PagedDecodeAttentionGpuTest {

    private static final int LAYERS = 3;
    private static final int LAYER = 1;

    private static Device device;
    private static KernelCache cache;
    private CUstream stream;

    @BeforeAll
    static void open() {
        if (OnGpuWithNvrtc.unavailableReason().isEmpty()) {
            device = DeviceFactory.forKind("cuda").open(0, "attention-test", Map.of());
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
        for (KvDtype dtype : KvDtype.values()) {
            for (Layout layout : Layout.values()) {
                all.add(Arguments.of(new AttentionShape(4, 4, 64, 32, dtype), layout));
                all.add(Arguments.of(new AttentionShape(8, 2, 128, 16, dtype), layout));
                all.add(Arguments.of(new AttentionShape(16, 2, 256, 8, dtype), layout));
            }
        }
        all.add(Arguments.of(new AttentionShape(16, 1, 128, 16, KvDtype.BF16), Layout.PAGE_MAJOR));
        return all.stream();
    }

    @ParameterizedTest(name = "{0} {1}")
    @MethodSource("shapes")
    void matchesTheDoublePrecisionReference(AttentionShape shape, Layout layout) {
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
            fillRandom(pool, shape, IntStream.range(0, geometry.totalBlocks()).toArray(), random);
            DecodeBatch batch = DecodeBatch.of(tables, lengths);
            double[][][] query = new double[lengths.length][shape.queryHeads()][shape.headSize()];
            short[] queryBits = randomQueries(shape, query, random);
            double[][][] expected = ReferenceAttention.compute(shape, batch, query,
                    (buffer, block, token, head, dim) -> shape.dtype().decode(pool.get(shape, LAYER, buffer, block, token, head, dim)));

            double tolerance = shape.dtype() == KvDtype.BF16 ? 0x1p-7 : 0x1p-9;
            for (KernelOptions options : variants(shape, geometry)) {
                short[] out = run(options, pool.tensors, batch, held, queryBits);
                double worst = 0;
                String where = "";
                int i = 0;
                for (int s = 0; s < lengths.length; s++) {
                    for (int h = 0; h < shape.queryHeads(); h++) {
                        for (int d = 0; d < shape.headSize(); d++) {
                            double error = Math.abs(shape.dtype().decode(out[i++]) - expected[s][h][d]);
                            if (!(error <= worst)) {
                                worst = error;
                                where = "sequence " + s + " (length " + lengths[s] + "), head " + h + ", dim " + d
                                        + ": expected " + expected[s][h][d];
                            }
                        }
                    }
                }
                System.out.printf("attention %s %s %s: max |error| %.2e (tolerance %.2e)%n", shape, layout,
                        kernel(options), worst, tolerance);
                assertThat(worst).as("%s: largest error, at %s", kernel(options), where).isLessThanOrEqualTo(tolerance);
            }
        }
    }

    /**
     * A batch the default launch shape would have to cut and merge (one thread block more than
     * fit at once) runs whole in one wave of its 3-warp alternative, and still matches the
     * reference: 2 KV heads, 8 query heads, every sequence over the same 128 blocks (a shared
     * prefix), lengths from 2033 to 2048 tokens.
     */
    @Test
    void theDefaultRunsABatchItWouldCutWholeInOneWaveOfThreeWarps() {
        AttentionShape shape = new AttentionShape(8, 2, 128, 16, KvDtype.BF16);
        Geometry geometry = new Geometry(LAYERS, 2, shape.blockBytes(), 2L << 20, 2, Layout.PAGE_MAJOR);
        SplittableRandom random = new SplittableRandom(2048);
        try (MappedPool pool = new MappedPool(device, geometry, random);
             PagedDecodeAttention attention = PagedDecodeAttention.create(shape, pool.tensors, 0, cache);
             DeviceBatch deviceBatch = attention.newBatch()) {
            int sequences = attention.multiprocessors() * attention.residentPerMultiprocessor() / shape.kvHeads() + 1;
            int[] prefix = new int[128];
            for (int k = 0; k < prefix.length; k++) {
                prefix[k] = 2 * k + 1;
            }
            GroupBlocks held = new GroupBlocks(geometry.totalBlocks());
            held.add(prefix);
            fillRandom(pool, shape, prefix, random);
            int[][] tables = new int[sequences][];
            int[] lengths = new int[sequences];
            for (int s = 0; s < sequences; s++) {
                tables[s] = prefix;
                lengths[s] = 2048 - s % 16;
            }
            DecodeBatch batch = DecodeBatch.of(tables, lengths);
            double[][][] query = new double[sequences][shape.queryHeads()][shape.headSize()];
            short[] queryBits = randomQueries(shape, query, random);
            assertThat(SplitPlan.waves(batch, shape.kvHeads(), attention.multiprocessors() * attention.residentPerMultiprocessor())
                    .maxSplits()).as("the default launch shape alone cuts this batch").isGreaterThan(1);

            long bytes = shape.queryBytes(sequences);
            CUdeviceptr q = alloc(bytes);
            CUdeviceptr o = alloc(bytes);
            cuStreamCreate(stream, 0);
            short[] out = new short[queryBits.length];
            try {
                cuMemcpyHtoD(q, Pointer.to(queryBits), bytes);
                LaunchPlan plan = attention.load(deviceBatch, batch, held, stream);
                assertThat(attention.launchShape(deviceBatch).warps()).as("the one-wave alternative runs it").isEqualTo(3);
                assertThat(plan).isInstanceOf(SplitPlan.class);
                assertThat(((SplitPlan) plan).maxSplits()).as("whole: no merge pass").isEqualTo(1);
                attention.launch(deviceBatch, LAYER, new DeviceBuffer(q, bytes), new DeviceBuffer(o, bytes), stream);
                cuStreamSynchronize(stream);
                cuMemcpyDtoH(Pointer.to(out), o, bytes);
            } finally {
                cuMemFree(q);
                cuMemFree(o);
                cuStreamDestroy(stream);
            }
            double[][][] expected = ReferenceAttention.compute(shape, batch, query,
                    (buffer, block, token, head, dim) -> shape.dtype().decode(pool.get(shape, LAYER, buffer, block, token, head, dim)));
            double worst = 0;
            int i = 0;
            for (int s = 0; s < sequences; s++) {
                for (int h = 0; h < shape.queryHeads(); h++) {
                    for (int d = 0; d < shape.headSize(); d++) {
                        worst = Math.max(worst, Math.abs(shape.dtype().decode(out[i++]) - expected[s][h][d]));
                    }
                }
            }
            System.out.printf("attention %s, %d sequences in one wave of 3 warps: max |error| %.2e (tolerance %.2e)%n", shape,
                    sequences, worst, 0x1p-7);
            assertThat(worst).isLessThanOrEqualTo(0x1p-7);
        }
    }

    /**
     * The launch shapes every case runs: the whole-block kernel (3 stages, a copy per token row), the
     * same with 2 tokens per copy, with 2 stages and 4 tokens per copy, the chunked kernel with 16
     * thread blocks per multiprocessor ({@link KernelOptions#portable}) and with the default whole
     * waves ({@link KernelOptions#of}), the same with a warp per KV head, and the chunked kernel with
     * 3 and 6 warps where their shared memory fits the head size (a warp count that does not divide
     * the tiles evenly).
     */
    private static List<KernelOptions> variants(AttentionShape shape, Geometry geometry) {
        KernelOptions defaults = KernelOptions.of(shape, geometry);
        KernelOptions whole = defaults.wholeBlockOptions().orElseThrow();
        List<KernelOptions> variants = new ArrayList<>(List.of(whole, whole.wholeBlocks(3, 0, 2), whole.wholeBlocks(2, 0, 4),
                defaults.portable(), defaults, defaults.with(2, 2, 0, false, 0).withWarpPerHead()));
        for (int warps : new int[] {3, 6}) {
            try {
                variants.add(defaults.with(warps, 2, 0, false, 0));
            } catch (IllegalArgumentException tooMuchSharedMemory) {
                // 6 warps of head size 256 need more shared memory than a thread block may have
            }
        }
        return variants;
    }

    private static String kernel(KernelOptions o) {
        return o.wholeBlocks() ? "whole blocks " + o.warps() + "+1w" + o.stages() + "s " + o.tokensPerCopy() + "t/copy"
                : "chunked " + o.warps() + "w" + o.stages() + "s" + (o.warpPerHead() ? " warp/head" : "");
    }

    @Test
    void badInputQueuesNothingAndSaysWhatIsWrong() {
        AttentionShape shape = new AttentionShape(8, 2, 128, 16, KvDtype.BF16);
        Geometry geometry = new Geometry(2, 2, shape.blockBytes(), 2L << 20, 2, Layout.PAGE_MAJOR);
        try (MappedPool pool = new MappedPool(device, geometry, new SplittableRandom(7));
             PagedDecodeAttention attention = PagedDecodeAttention.create(shape, pool.tensors, 0, cache);
             DeviceBatch deviceBatch = attention.newBatch()) {
            GroupBlocks held = new GroupBlocks(geometry.totalBlocks());
            held.add(3, 4);
            DecodeBatch good = DecodeBatch.of(new int[][] {{3, 4}}, new int[] {20});
            long bytes = shape.queryBytes(1);
            CUdeviceptr q = alloc(bytes);
            CUdeviceptr o = alloc(bytes);
            try {
                short[] marker = new short[(int) (bytes / 2)];
                Arrays.fill(marker, (short) 0x7e7e);
                cuMemcpyHtoD(o, Pointer.to(marker), bytes);
                cuMemcpyHtoD(q, Pointer.to(marker), bytes);
                assertThatThrownBy(() -> attention.load(deviceBatch, DecodeBatch.of(new int[][] {{3, 5}}, new int[] {20}), held, stream))
                        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("block 5 is not allocated");
                assertThat(deviceBatch.batch()).as("nothing loaded").isNull();
                attention.load(deviceBatch, good, held, stream);
                DeviceBuffer query = new DeviceBuffer(q, bytes);
                assertThatThrownBy(() -> attention.launch(deviceBatch, 0, new DeviceBuffer(o, bytes - 2), query, stream))
                        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("query buffer holds " + (bytes - 2));
                assertThatThrownBy(() -> attention.launch(deviceBatch, 0, query, new DeviceBuffer(o, bytes - 2), stream))
                        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("output buffer holds " + (bytes - 2));
                assertThatThrownBy(() -> attention.launch(deviceBatch, 2, query, new DeviceBuffer(o, bytes), stream))
                        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("layer 2 is outside 0..1");
                cuStreamSynchronize(stream);
                short[] after = new short[marker.length];
                cuMemcpyDtoH(Pointer.to(after), o, bytes);
                assertThat(after).as("output untouched").isEqualTo(marker);
            } finally {
                cuMemFree(q);
                cuMemFree(o);
            }
        }
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
            if (plan instanceof SplitPlan split) {
                assertThat(split.maxSplits()).as("the long sequences are split").isGreaterThan(1);
            } else if (plan instanceof StreamPlan ranges) {
                long longest = (batch.maxLength() + SplitPlan.TILE - 1) / SplitPlan.TILE;
                assertThat(longest).as("the long sequences are cut between thread blocks")
                        .isGreaterThan(ranges.tiles() / ranges.ctas() + 1);
            }
            // twice: the whole-block kernel's counters must be back at zero after a launch
            for (int launch = 0; launch < 2; launch++) {
                attention.launch(deviceBatch, LAYER, new DeviceBuffer(q, bytes), new DeviceBuffer(o, bytes), own);
            }
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

    /** Every element of K and V of {@code blocks} in layer {@link #LAYER} random in [-1, 1), then on the GPU. */
    private static void fillRandom(MappedPool pool, AttentionShape shape, int[] blocks, SplittableRandom random) {
        for (int b : blocks) {
            for (int buffer = 0; buffer < 2; buffer++) {
                for (int t = 0; t < shape.blockTokens(); t++) {
                    for (int h = 0; h < shape.kvHeads(); h++) {
                        for (int d = 0; d < shape.headSize(); d++) {
                            pool.set(shape, LAYER, buffer, b, t, h, d, shape.dtype().encode((float) random.nextDouble(-1, 1)));
                        }
                    }
                }
            }
        }
        pool.upload();
    }

    /** Fills {@code query} with random values in [-4, 4) as the element type rounds them; their bits, in order. */
    private static short[] randomQueries(AttentionShape shape, double[][][] query, SplittableRandom random) {
        short[] bits = new short[(int) (shape.queryBytes(query.length) / 2)];
        int i = 0;
        for (double[][] sequence : query) {
            for (double[] head : sequence) {
                for (int d = 0; d < head.length; d++) {
                    short element = shape.dtype().encode((float) random.nextDouble(-4, 4));
                    head[d] = shape.dtype().decode(element);
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
