package io.kvpager.attention;

import static jcuda.driver.JCudaDriver.cuCtxSetCurrent;
import static jcuda.driver.JCudaDriver.cuDeviceGet;
import static jcuda.driver.JCudaDriver.cuDeviceGetAttribute;
import static jcuda.driver.JCudaDriver.cuDevicePrimaryCtxRelease;
import static jcuda.driver.JCudaDriver.cuDevicePrimaryCtxRetain;
import static jcuda.driver.JCudaDriver.cuFuncSetAttribute;
import static jcuda.driver.JCudaDriver.cuInit;
import static jcuda.driver.JCudaDriver.cuLaunchKernel;
import static jcuda.driver.JCudaDriver.cuModuleGetFunction;
import static jcuda.driver.JCudaDriver.cuModuleLoadData;
import static jcuda.driver.JCudaDriver.cuModuleUnload;
import static jcuda.driver.JCudaDriver.cuOccupancyMaxActiveBlocksPerMultiprocessor;

import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import jcuda.Pointer;
import jcuda.driver.CUcontext;
import jcuda.driver.CUdevice;
import jcuda.driver.CUdevice_attribute;
import jcuda.driver.CUfunction;
import jcuda.driver.CUfunction_attribute;
import jcuda.driver.CUmodule;
import jcuda.driver.CUstream;
import jcuda.driver.JCudaDriver;

/**
 * Paged decode attention for one rank's K and V tensors of one group: for every sequence of a
 * batch and every query head, {@code softmax(q·Kᵀ/√D)·V} over the sequence's tokens, reading the
 * blocks its table names where kvpager mapped them.
 *
 * <p>The kernel is compiled for this GPU's architecture and the shape by NVRTC (through
 * {@link KernelCache}), loaded and launched through JCuda on the GPU's primary context, the one
 * kvpager's rank workers use, so the tensors' addresses are valid here. Every launch is
 * asynchronous on the caller's {@link CUstream}; every check runs before anything is queued, and a
 * failed check queues nothing.
 *
 * <p>Calls may come from any thread, one at a time: each makes the primary context current on the
 * calling thread first.
 */
public final class PagedDecodeAttention implements AutoCloseable {

    private static final float LOG2_E = 1.4426950408889634f;
    /** Tokens per thread block of the read floor: many small blocks, so no multiprocessor idles at the end. */
    private static final int READ_CHUNK = 256;

    private final AttentionShape shape;
    private final KvTensors tensors;
    private final CUdevice device = new CUdevice();
    private final CUcontext context = new CUcontext();
    /** The launch shapes compiled: the options' first, then the one-wave alternative, if any. */
    private final List<Kernel> kernels = new ArrayList<>();
    private final CUfunction read = new CUfunction();
    private final CUfunction readBulk = new CUfunction();
    /** FP8 pages: kv_append_fp8 and its write floor. */
    private final CUfunction append = new CUfunction();
    private final CUfunction appendFloor = new CUfunction();
    private final int multiprocessors;
    private final String architecture;
    private final int computeCapability;
    private final int maxSharedBytes;
    private final float scaleLog2;
    private boolean closed;

    /** One compiled launch shape: its module, its functions and how many of its thread blocks fit a multiprocessor. */
    private static final class Kernel {
        final KernelOptions options;
        final CUmodule module = new CUmodule();
        final CUfunction decode = new CUfunction();
        final CUfunction merge = new CUfunction();
        final CUfunction decodeBlocks = new CUfunction();
        int resident;

        Kernel(KernelOptions options) {
            this.options = options;
        }
    }

    private PagedDecodeAttention(AttentionShape shape, KvTensors tensors, List<KernelOptions> launchShapes, int gpu,
                                 KernelCache cache) {
        this.shape = shape;
        this.tensors = tensors;
        JCudaDriver.setExceptionsEnabled(true);
        cuInit(0);
        cuDeviceGet(device, gpu);
        cuDevicePrimaryCtxRetain(context, device);
        try {
            cuCtxSetCurrent(context);
            this.multiprocessors = attribute(CUdevice_attribute.CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT);
            int major = attribute(CUdevice_attribute.CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR);
            int minor = attribute(CUdevice_attribute.CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR);
            this.architecture = "sm_" + major + minor;
            this.computeCapability = major * 10 + minor;
            this.maxSharedBytes = attribute(CUdevice_attribute.CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN);
            if (shape.fp8() && computeCapability < 89) {
                throw new IllegalArgumentException("FP8 pages need sm_89 or later (the e4m3 conversion instructions), this GPU is "
                        + architecture);
            }
            if (launchShapes.getFirst().wholeBlocks() && computeCapability < 90) {
                throw new IllegalArgumentException("the whole-block kernel needs sm_90 or later, this GPU is "
                        + architecture + ": use KernelOptions.portable()");
            }
            for (KernelOptions launchShape : launchShapes) {
                kernels.add(load(launchShape, cache));
            }
            CUmodule first = kernels.getFirst().module;
            cuModuleGetFunction(read, first, "paged_read");
            cuModuleGetFunction(readBulk, first, "paged_read_bulk");
            if (shape.fp8()) {
                cuModuleGetFunction(append, first, "kv_append_fp8");
                cuModuleGetFunction(appendFloor, first, "kv_append_floor");
            }
            if (computeCapability >= 90) {
                cuFuncSetAttribute(readBulk, CUfunction_attribute.CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                        maxSharedBytes);
            }
        } catch (RuntimeException e) {
            for (Kernel loaded : kernels) {
                cuModuleUnload(loaded.module);
            }
            cuDevicePrimaryCtxRelease(device);
            throw e;
        }
        this.scaleLog2 = (float) (1.0 / Math.sqrt(shape.headSize())) * LOG2_E;
    }

    /** Compiles (or finds in the cache) and loads one launch shape; the context is current. */
    private Kernel load(KernelOptions launchShape, KernelCache cache) {
        Kernel kernel = new Kernel(launchShape);
        cuModuleLoadData(kernel.module, cache.module(architecture, launchShape));
        try {
            cuModuleGetFunction(kernel.decode, kernel.module, "paged_decode");
            cuModuleGetFunction(kernel.merge, kernel.module, "paged_decode_merge");
            if (launchShape.wholeBlocks()) {
                cuModuleGetFunction(kernel.decodeBlocks, kernel.module, "paged_decode_blocks");
            }
            CUfunction used = launchShape.wholeBlocks() ? kernel.decodeBlocks : kernel.decode;
            cuFuncSetAttribute(used, CUfunction_attribute.CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                    launchShape.sharedBytes());
            int[] resident = new int[1];
            cuOccupancyMaxActiveBlocksPerMultiprocessor(resident, used, launchShape.threads(), launchShape.sharedBytes());
            kernel.resident = Math.max(1, resident[0]);
            return kernel;
        } catch (RuntimeException e) {
            cuModuleUnload(kernel.module);
            throw e;
        }
    }

    /**
     * The operation for {@code shape} over {@code tensors} on GPU {@code gpu}, with the default
     * launch shape and its one-wave alternatives ({@link KernelOptions#oneWaveAlternatives}): for a
     * batch the default would cut or run in several waves, {@link #load} picks the first of them that
     * runs it whole in one wave.
     *
     * @throws IllegalArgumentException when the shape does not fit the tensors' geometry
     * @throws IllegalStateException when NVRTC is missing (the message says what was looked for)
     */
    public static PagedDecodeAttention create(AttentionShape shape, KvTensors tensors, int gpu, KernelCache cache) {
        Objects.requireNonNull(tensors, "tensors");
        KernelOptions defaults = KernelOptions.of(shape, tensors.geometry());
        List<KernelOptions> launchShapes = new ArrayList<>(List.of(defaults));
        launchShapes.addAll(defaults.oneWaveAlternatives());
        return create(launchShapes, tensors, gpu, cache);
    }

    /** The same with explicit kernel options (warps, stages), the only launch shape used. */
    public static PagedDecodeAttention create(KernelOptions options, KvTensors tensors, int gpu, KernelCache cache) {
        return create(List.of(options), tensors, gpu, cache);
    }

    /**
     * The same with explicit launch shapes: the first for every batch it runs whole in one wave,
     * the others tried in order for a batch it would cut or run in several waves (as
     * {@link #create(AttentionShape, KvTensors, int, KernelCache)} does with the default and its
     * alternatives). All of one shape; the whole-block kernel only first and alone.
     *
     * @throws IllegalArgumentException for no launch shape, shapes of different attention shapes,
     *     or options that do not fit the tensors
     */
    public static PagedDecodeAttention create(List<KernelOptions> launchShapes, KvTensors tensors, int gpu, KernelCache cache) {
        Objects.requireNonNull(tensors, "tensors");
        if (launchShapes.isEmpty()) {
            throw new IllegalArgumentException("at least one launch shape is needed");
        }
        for (KernelOptions options : launchShapes) {
            if (!options.shape().equals(launchShapes.getFirst().shape())) {
                throw new IllegalArgumentException("launch shapes of one operation share its shape: "
                        + launchShapes.getFirst().shape() + " and " + options.shape());
            }
            if (options.wholeBlocks() && launchShapes.size() > 1) {
                throw new IllegalArgumentException("the whole-block kernel runs alone: its plan is not a split plan");
            }
        }
        for (KernelOptions options : launchShapes) {
            options.shape().requireFits(tensors.geometry());
            if (options.blocksPerPage() != tensors.geometry().blocksPerPage()) {
                throw new IllegalArgumentException("kernel options for " + options.blocksPerPage()
                        + " blocks per page, the cache has " + tensors.geometry().blocksPerPage());
            }
        }
        return new PagedDecodeAttention(launchShapes.getFirst().shape(), tensors, launchShapes, gpu, cache);
    }

    /** A device batch to {@link #load} batches into; the caller closes it. */
    public DeviceBatch newBatch() {
        cuCtxSetCurrent(context);
        return new DeviceBatch();
    }

    /**
     * Checks {@code batch} against the cache and the blocks the group holds, plans the launch and
     * queues its copy into {@code into} on {@code stream}.
     *
     * @throws IllegalArgumentException naming what does not fit; nothing is queued then
     */
    public LaunchPlan load(DeviceBatch into, DecodeBatch batch, GroupBlocks held, CUstream stream) {
        requireOpen();
        batch.check(shape, tensors.geometry(), held);
        int chosen = 0;
        Kernel first = kernels.getFirst();
        LaunchPlan plan = plan(first, batch);
        if (!(plan instanceof SplitPlan split
                && split.isOneWhole(batch, first.options.blocksPerChunk(), multiprocessors * first.resident))) {
            // a batch that the first shape cuts and merges, or runs in several waves, but another runs whole in one wave
            for (int k = 1; k < kernels.size(); k++) {
                Kernel other = kernels.get(k);
                int resident = multiprocessors * other.resident;
                SplitPlan alternative = SplitPlan.waves(batch, other.options.blocksPerChunk(), resident);
                if (alternative.isOneWhole(batch, other.options.blocksPerChunk(), resident)) {
                    chosen = k;
                    plan = alternative;
                    break;
                }
            }
        }
        cuCtxSetCurrent(context);
        into.load(batch, plan, shape, stream, chosen);
        return plan;
    }

    private LaunchPlan plan(Kernel kernel, DecodeBatch batch) {
        int perMultiprocessor = kernel.options.blocksPerMultiprocessor();
        if (kernel.options.wholeBlocks()) {
            int fit = perMultiprocessor == 0 ? kernel.resident : Math.min(perMultiprocessor, kernel.resident);
            return StreamPlan.of(batch, multiprocessors * fit);
        }
        int blocksPerChunk = kernel.options.blocksPerChunk();
        return perMultiprocessor == 0
                ? SplitPlan.waves(batch, blocksPerChunk, multiprocessors * kernel.resident)
                : SplitPlan.of(batch, blocksPerChunk, multiprocessors, perMultiprocessor);
    }

    /** The launch shape the batch last loaded into {@code batch} runs with. */
    public KernelOptions launchShape(DeviceBatch batch) {
        requireLoaded(batch);
        return kernels.get(batch.kernel()).options;
    }

    /**
     * Queues attention of layer {@code layer} for the batch last loaded into {@code batch}:
     * {@code query} holds {@code sequences × queryHeads × headSize} elements (sequence-major, query
     * head {@code h} reads KV head {@code h / group}), {@code out} receives as many.
     *
     * @throws IllegalArgumentException for a layer outside the cache or buffers too small; nothing
     *     is queued then
     */
    public void launch(DeviceBatch batch, int layer, DeviceBuffer query, DeviceBuffer out, CUstream stream) {
        requireOpen();
        DecodeBatch loaded = requireLoaded(batch);
        long keys = tensors.view(layer, KvTensors.KEYS);
        long values = tensors.view(layer, KvTensors.VALUES);
        long bytes = shape.queryBytes(loaded.sequences());
        query.requireAtLeast(bytes, "query");
        out.requireAtLeast(bytes, "output");
        Kernel kernel = kernels.get(batch.kernel());
        KernelOptions options = kernel.options;
        cuCtxSetCurrent(context);
        if (batch.plan() instanceof StreamPlan plan) {
            Pointer arguments = Pointer.to(
                    Pointer.to(query.pointer()), Pointer.to(out.pointer()), Pointer.to(batch.partial()),
                    Pointer.to(batch.stats()), Pointer.to(batch.counters()), Pointer.to(batch.tables()),
                    Pointer.to(batch.starts()), Pointer.to(batch.tileStarts()), Pointer.to(batch.lengths()),
                    Pointer.to(new long[] {keys}), Pointer.to(new long[] {values}),
                    Pointer.to(new long[] {tensors.blockStride()}), Pointer.to(new long[] {tensors.pageStride()}),
                    Pointer.to(new int[] {loaded.sequences()}), Pointer.to(new float[] {scaleLog2}));
            cuLaunchKernel(kernel.decodeBlocks, plan.ctas(), 1, 1, options.threads(), 1, 1, options.sharedBytes(), stream, arguments,
                    null);
            return;
        }
        SplitPlan plan = (SplitPlan) batch.plan();
        Pointer decodeArguments = Pointer.to(
                Pointer.to(query.pointer()), Pointer.to(out.pointer()), Pointer.to(batch.partial()),
                Pointer.to(batch.stats()), Pointer.to(batch.tables()), Pointer.to(batch.starts()),
                Pointer.to(batch.lengths()), Pointer.to(new long[] {keys}), Pointer.to(new long[] {values}),
                Pointer.to(new long[] {tensors.blockStride()}), Pointer.to(new long[] {tensors.pageStride()}),
                Pointer.to(new int[] {plan.chunkTokens()}), Pointer.to(new int[] {plan.maxSplits()}),
                Pointer.to(new float[] {scaleLog2}));
        int gridX = options.headsFirst() ? options.blocksPerChunk() : plan.maxSplits();
        int gridY = options.headsFirst() ? plan.maxSplits() : options.blocksPerChunk();
        cuLaunchKernel(kernel.decode, gridX, gridY, loaded.sequences(), options.threads(), 1, 1,
                options.sharedBytes(), stream, decodeArguments, null);
        if (plan.maxSplits() > 1) {
            Pointer mergeArguments = Pointer.to(
                    Pointer.to(out.pointer()), Pointer.to(batch.partial()), Pointer.to(batch.stats()),
                    Pointer.to(batch.lengths()), Pointer.to(new int[] {plan.chunkTokens()}),
                    Pointer.to(new int[] {plan.maxSplits()}));
            cuLaunchKernel(kernel.merge, shape.queryHeads(), loaded.sequences(), 1, shape.headSize(), 1, 1, 0, stream,
                    mergeArguments, null);
        }
    }

    /**
     * Queues the paged-read floor for layer {@code layer}: a kernel that reads exactly the K and V
     * bytes {@link #launch} reads, through the same tables, and computes nothing. What attention
     * over these blocks could take at best; the benchmark's yardstick.
     */
    public void launchReadFloor(DeviceBatch batch, int layer, CUstream stream) {
        requireOpen();
        DecodeBatch loaded = requireLoaded(batch);
        cuCtxSetCurrent(context);
        Pointer arguments = Pointer.to(
                Pointer.to(batch.tables()), Pointer.to(batch.starts()), Pointer.to(batch.lengths()),
                Pointer.to(new long[] {tensors.view(layer, KvTensors.KEYS)}),
                Pointer.to(new long[] {tensors.view(layer, KvTensors.VALUES)}),
                Pointer.to(new long[] {tensors.blockStride()}), Pointer.to(new long[] {tensors.pageStride()}),
                Pointer.to(new int[] {READ_CHUNK}), Pointer.to(batch.sink()));
        cuLaunchKernel(read, (loaded.maxLength() + READ_CHUNK - 1) / READ_CHUNK, loaded.sequences(), 1, 256, 1, 1, 0,
                stream, arguments, null);
    }

    /**
     * Queues the bulk-copy read floor for layer {@code layer}: the same K and V bytes as
     * {@link #launchReadFloor}, fetched by the copy engine in copies of up to {@code runTokens}
     * tokens of one block (every KV head) into {@code slots} shared-memory slots of a 16-token tile
     * per thread block, {@code perMultiprocessor} thread blocks per multiprocessor, each with an
     * equal share of the tiles. sm_90 and later.
     *
     * @throws IllegalArgumentException when the slots do not fit a thread block's shared memory
     * @throws IllegalStateException on a GPU before sm_90
     */
    public void launchBulkReadFloor(DeviceBatch batch, int layer, int perMultiprocessor, int slots, int runTokens,
                                    CUstream stream) {
        requireOpen();
        DecodeBatch loaded = requireLoaded(batch);
        if (computeCapability < 90) {
            throw new IllegalStateException("the bulk-copy floor needs sm_90 or later, this GPU is " + architecture);
        }
        long sharedBytes = (long) slots * (SplitPlan.TILE * shape.blockBytes() / shape.blockTokens() + Long.BYTES);
        if (slots < 1 || perMultiprocessor < 1 || runTokens < 1 || sharedBytes > maxSharedBytes) {
            throw new IllegalArgumentException(slots + " slots need " + sharedBytes + " bytes of shared memory, at most "
                    + maxSharedBytes + " fit; thread blocks per multiprocessor and tokens per copy must be at least 1, got "
                    + perMultiprocessor + " and " + runTokens);
        }
        long tiles = StreamPlan.tileStarts(loaded)[loaded.sequences()];
        int ctas = (int) Math.min(tiles, (long) multiprocessors * perMultiprocessor);
        cuCtxSetCurrent(context);
        Pointer arguments = Pointer.to(
                Pointer.to(batch.tables()), Pointer.to(batch.starts()), Pointer.to(batch.tileStarts()),
                Pointer.to(batch.lengths()), Pointer.to(new long[] {tensors.view(layer, KvTensors.KEYS)}),
                Pointer.to(new long[] {tensors.view(layer, KvTensors.VALUES)}),
                Pointer.to(new long[] {tensors.blockStride()}), Pointer.to(new long[] {tensors.pageStride()}),
                Pointer.to(new int[] {loaded.sequences()}), Pointer.to(new int[] {slots}), Pointer.to(new int[] {runTokens}));
        cuLaunchKernel(readBulk, ctas, 1, 1, 32, 1, 1, (int) sharedBytes, stream, arguments, null);
    }

    /** Threads per thread block of the append kernels, and the lanes each token's row of one head takes. */
    private static final int APPEND_THREADS = 256;

    /** Slots on the device to {@link #load(AppendSlots, long[], GroupBlocks, CUstream)} appends into; the caller closes them. */
    public AppendSlots newAppendSlots() {
        cuCtxSetCurrent(context);
        return new AppendSlots();
    }

    /**
     * Checks {@code slots} (one per new token: block id × blockTokens + position in the block)
     * against the cache and the blocks the group holds, and queues their copy into {@code into}.
     *
     * @throws IllegalArgumentException naming the first slot that does not fit; nothing is queued then
     */
    public void load(AppendSlots into, long[] slots, GroupBlocks held, CUstream stream) {
        requireOpen();
        AppendSlots.check(slots, shape.blockTokens(), tensors.geometry(), held);
        cuCtxSetCurrent(context);
        into.load(slots, stream);
    }

    /**
     * Queues the append of the tokens {@code slots} was loaded with into layer {@code layer}:
     * {@code keys} and {@code values} hold {@code tokens × kvHeads × headSize} bf16 elements each
     * (token-major, as a model's K and V projections leave them); each token's row of each KV head
     * is written as e4m3 with its scale ({@link E4m3#quantize}) at its slot. FP8 pages only.
     *
     * @throws IllegalStateException for pages that are not FP8
     * @throws IllegalArgumentException for no slots loaded, a layer outside the cache or buffers
     *     too small; nothing is queued then
     */
    public void launchAppend(AppendSlots slots, int layer, DeviceBuffer keys, DeviceBuffer values, CUstream stream) {
        launchAppend(append, slots, layer, keys, values, stream);
    }

    /**
     * Queues the append's write floor: the same loads and stores through the same slots, the bytes
     * stored only picked out of the input, nothing computed. The benchmark's yardstick for
     * {@link #launchAppend}; it leaves garbage in the slots.
     */
    public void launchAppendFloor(AppendSlots slots, int layer, DeviceBuffer keys, DeviceBuffer values, CUstream stream) {
        launchAppend(appendFloor, slots, layer, keys, values, stream);
    }

    private void launchAppend(CUfunction function, AppendSlots slots, int layer, DeviceBuffer keys, DeviceBuffer values,
                              CUstream stream) {
        requireOpen();
        if (!shape.fp8()) {
            throw new IllegalStateException("the append kernel writes FP8 pages; these are " + shape.kv()
                    + ": an engine writes bf16 K and V into them as they are");
        }
        int tokens = slots.tokens();
        if (tokens == 0) {
            throw new IllegalArgumentException("no slots loaded: call load first");
        }
        long kBase = tensors.view(layer, KvTensors.KEYS);
        long vBase = tensors.view(layer, KvTensors.VALUES);
        long bytes = (long) tokens * shape.kvHeads() * shape.headSize() * KvDtype.BF16.bytes();
        keys.requireAtLeast(bytes, "keys");
        values.requireAtLeast(bytes, "values");
        long rows = (long) tokens * shape.kvHeads();
        int rowsPerBlock = APPEND_THREADS / (shape.headSize() / 16);
        long grid = (rows + rowsPerBlock - 1) / rowsPerBlock;
        cuCtxSetCurrent(context);
        Pointer arguments = Pointer.to(
                Pointer.to(keys.pointer()), Pointer.to(values.pointer()), Pointer.to(slots.pointer()),
                Pointer.to(new int[] {tokens}), Pointer.to(new long[] {kBase}), Pointer.to(new long[] {vBase}),
                Pointer.to(new long[] {tensors.blockStride()}), Pointer.to(new long[] {tensors.pageStride()}));
        cuLaunchKernel(function, (int) grid, 2, 1, APPEND_THREADS, 1, 1, 0, stream, arguments, null);
    }

    public AttentionShape shape() {
        return shape;
    }

    public KvTensors tensors() {
        return tensors;
    }

    /** The first launch shape: the only one for options given explicitly, else the default. */
    public KernelOptions options() {
        return kernels.getFirst().options;
    }

    /** The GPU's multiprocessors, which the launch plans fill. */
    public int multiprocessors() {
        return multiprocessors;
    }

    /** Thread blocks of the first launch shape's kernel that fit on one multiprocessor at once. */
    public int residentPerMultiprocessor() {
        return kernels.getFirst().resident;
    }

    /** The architecture the kernel was compiled for, e.g. {@code sm_90}. */
    public String architecture() {
        return architecture;
    }

    /** Unloads the module and releases the primary context; the caller has synchronized its streams. */
    @Override
    public void close() {
        if (closed) {
            return;
        }
        closed = true;
        try {
            cuCtxSetCurrent(context);
            for (Kernel kernel : kernels) {
                cuModuleUnload(kernel.module);
            }
        } finally {
            cuDevicePrimaryCtxRelease(device);
        }
    }

    private DecodeBatch requireLoaded(DeviceBatch batch) {
        DecodeBatch loaded = batch.batch();
        if (loaded == null) {
            throw new IllegalArgumentException("no batch loaded into this device batch: call load first");
        }
        return loaded;
    }

    private void requireOpen() {
        if (closed) {
            throw new IllegalStateException("this attention operation is closed");
        }
    }

    private int attribute(int attribute) {
        int[] value = new int[1];
        cuDeviceGetAttribute(value, attribute, device);
        return value[0];
    }
}
