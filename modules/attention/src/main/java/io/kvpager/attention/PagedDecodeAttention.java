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
    private final KernelOptions options;
    private final CUdevice device = new CUdevice();
    private final CUcontext context = new CUcontext();
    private final CUmodule module = new CUmodule();
    private final CUfunction decode = new CUfunction();
    private final CUfunction merge = new CUfunction();
    private final CUfunction decodeBlocks = new CUfunction();
    private final CUfunction read = new CUfunction();
    private final CUfunction readBulk = new CUfunction();
    private final int multiprocessors;
    private final int residentPerMultiprocessor;
    private final String architecture;
    private final int computeCapability;
    private final int maxSharedBytes;
    private final float scaleLog2;
    private boolean closed;

    private PagedDecodeAttention(AttentionShape shape, KvTensors tensors, KernelOptions options, int gpu, KernelCache cache) {
        this.shape = shape;
        this.tensors = tensors;
        this.options = options;
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
            if (options.wholeBlocks() && computeCapability < 90) {
                throw new IllegalArgumentException("the whole-block kernel needs sm_90 or later, this GPU is "
                        + architecture + ": use KernelOptions.portable()");
            }
            cuModuleLoadData(module, cache.module(architecture, options));
            cuModuleGetFunction(decode, module, "paged_decode");
            cuModuleGetFunction(merge, module, "paged_decode_merge");
            if (options.wholeBlocks()) {
                cuModuleGetFunction(decodeBlocks, module, "paged_decode_blocks");
            }
            cuModuleGetFunction(read, module, "paged_read");
            cuModuleGetFunction(readBulk, module, "paged_read_bulk");
            CUfunction used = options.wholeBlocks() ? decodeBlocks : decode;
            cuFuncSetAttribute(used, CUfunction_attribute.CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                    options.sharedBytes());
            if (computeCapability >= 90) {
                cuFuncSetAttribute(readBulk, CUfunction_attribute.CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                        maxSharedBytes);
            }
            int[] resident = new int[1];
            cuOccupancyMaxActiveBlocksPerMultiprocessor(resident, used, options.threads(), options.sharedBytes());
            this.residentPerMultiprocessor = Math.max(1, resident[0]);
        } catch (RuntimeException e) {
            cuDevicePrimaryCtxRelease(device);
            throw e;
        }
        this.scaleLog2 = (float) (1.0 / Math.sqrt(shape.headSize())) * LOG2_E;
    }

    /**
     * The operation for {@code shape} over {@code tensors} on GPU {@code gpu}, with the default
     * launch shape.
     *
     * @throws IllegalArgumentException when the shape does not fit the tensors' geometry
     * @throws IllegalStateException when NVRTC is missing (the message says what was looked for)
     */
    public static PagedDecodeAttention create(AttentionShape shape, KvTensors tensors, int gpu, KernelCache cache) {
        return create(KernelOptions.of(shape, tensors.geometry()), tensors, gpu, cache);
    }

    /** The same with explicit kernel options (warps, stages). */
    public static PagedDecodeAttention create(KernelOptions options, KvTensors tensors, int gpu, KernelCache cache) {
        Objects.requireNonNull(tensors, "tensors");
        options.shape().requireFits(tensors.geometry());
        if (options.blocksPerPage() != tensors.geometry().blocksPerPage()) {
            throw new IllegalArgumentException("kernel options for " + options.blocksPerPage()
                    + " blocks per page, the cache has " + tensors.geometry().blocksPerPage());
        }
        return new PagedDecodeAttention(options.shape(), tensors, options, gpu, cache);
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
        int perMultiprocessor = options.blocksPerMultiprocessor();
        LaunchPlan plan;
        if (options.wholeBlocks()) {
            int fit = perMultiprocessor == 0 ? residentPerMultiprocessor : Math.min(perMultiprocessor, residentPerMultiprocessor);
            plan = StreamPlan.of(batch, multiprocessors * fit);
        } else {
            plan = perMultiprocessor == 0
                    ? SplitPlan.waves(batch, shape.kvHeads(), multiprocessors * residentPerMultiprocessor)
                    : SplitPlan.of(batch, shape.kvHeads(), multiprocessors, perMultiprocessor);
        }
        cuCtxSetCurrent(context);
        into.load(batch, plan, shape, stream);
        return plan;
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
        cuCtxSetCurrent(context);
        if (batch.plan() instanceof StreamPlan plan) {
            Pointer arguments = Pointer.to(
                    Pointer.to(query.pointer()), Pointer.to(out.pointer()), Pointer.to(batch.partial()),
                    Pointer.to(batch.stats()), Pointer.to(batch.counters()), Pointer.to(batch.tables()),
                    Pointer.to(batch.starts()), Pointer.to(batch.tileStarts()), Pointer.to(batch.lengths()),
                    Pointer.to(new long[] {keys}), Pointer.to(new long[] {values}),
                    Pointer.to(new long[] {tensors.blockStride()}), Pointer.to(new long[] {tensors.pageStride()}),
                    Pointer.to(new int[] {loaded.sequences()}), Pointer.to(new float[] {scaleLog2}));
            cuLaunchKernel(decodeBlocks, plan.ctas(), 1, 1, options.threads(), 1, 1, options.sharedBytes(), stream, arguments,
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
        int gridX = options.headsFirst() ? shape.kvHeads() : plan.maxSplits();
        int gridY = options.headsFirst() ? plan.maxSplits() : shape.kvHeads();
        cuLaunchKernel(decode, gridX, gridY, loaded.sequences(), options.threads(), 1, 1,
                options.sharedBytes(), stream, decodeArguments, null);
        if (plan.maxSplits() > 1) {
            Pointer mergeArguments = Pointer.to(
                    Pointer.to(out.pointer()), Pointer.to(batch.partial()), Pointer.to(batch.stats()),
                    Pointer.to(batch.lengths()), Pointer.to(new int[] {plan.chunkTokens()}),
                    Pointer.to(new int[] {plan.maxSplits()}));
            cuLaunchKernel(merge, shape.queryHeads(), loaded.sequences(), 1, shape.headSize(), 1, 1, 0, stream,
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

    public AttentionShape shape() {
        return shape;
    }

    public KvTensors tensors() {
        return tensors;
    }

    public KernelOptions options() {
        return options;
    }

    /** The GPU's multiprocessors, which the launch plans fill. */
    public int multiprocessors() {
        return multiprocessors;
    }

    /** Thread blocks of the kernel that fit on one multiprocessor at once. */
    public int residentPerMultiprocessor() {
        return residentPerMultiprocessor;
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
            cuModuleUnload(module);
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
