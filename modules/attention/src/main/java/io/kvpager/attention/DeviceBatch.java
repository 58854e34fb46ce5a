package io.kvpager.attention;

import static jcuda.driver.JCudaDriver.cuEventCreate;
import static jcuda.driver.JCudaDriver.cuEventDestroy;
import static jcuda.driver.JCudaDriver.cuEventRecord;
import static jcuda.driver.JCudaDriver.cuEventSynchronize;
import static jcuda.driver.JCudaDriver.cuMemAlloc;
import static jcuda.driver.JCudaDriver.cuMemAllocHost;
import static jcuda.driver.JCudaDriver.cuMemFree;
import static jcuda.driver.JCudaDriver.cuMemFreeHost;
import static jcuda.driver.JCudaDriver.cuMemcpyHtoDAsync;

import java.nio.ByteOrder;
import java.nio.IntBuffer;
import jcuda.Pointer;
import jcuda.driver.CUdeviceptr;
import jcuda.driver.CUevent;
import jcuda.driver.CUevent_flags;
import jcuda.driver.CUstream;

/**
 * A decode batch on the device: its block tables, table starts and lengths, and the scratch its
 * split plan needs, for every layer of one step. {@link #load} copies a checked batch in on the
 * caller's stream from pinned memory, asynchronously; the buffers grow when a batch needs more and
 * are reused otherwise. Use on one thread at a time; {@link #close()} frees everything.
 */
public final class DeviceBatch implements AutoCloseable {

    private final Region tables = new Region();
    private final Region starts = new Region();
    private final Region lengths = new Region();
    private final Region partial = new Region();
    private final Region stats = new Region();
    private final Region sink = new Region();
    private final Pointer staging = new Pointer();
    private long stagingBytes;
    private final CUevent copied = new CUevent();
    private boolean copyPending;
    private DecodeBatch batch;
    private SplitPlan plan;
    private boolean closed;

    DeviceBatch() {
        cuEventCreate(copied, CUevent_flags.CU_EVENT_DISABLE_TIMING);
    }

    /**
     * Queues the copy of {@code batch} (already checked) on {@code stream}, with {@code plan}'s
     * scratch. Waits only for this object's previous copy, which the previous step's kernels
     * already waited for.
     */
    void load(DecodeBatch batch, SplitPlan plan, AttentionShape shape, CUstream stream) {
        if (closed) {
            throw new IllegalStateException("this device batch is closed");
        }
        int entries = Math.max(1, batch.tableEntries());
        int sequences = batch.sequences();
        long tableBytes = (long) entries * Integer.BYTES;
        long startBytes = (long) (sequences + 1) * Integer.BYTES;
        long lengthBytes = (long) sequences * Integer.BYTES;
        if (copyPending) {
            cuEventSynchronize(copied);
            copyPending = false;
        }
        long needed = tableBytes + startBytes + lengthBytes;
        if (stagingBytes < needed) {
            if (stagingBytes > 0) {
                cuMemFreeHost(staging);
            }
            stagingBytes = Math.max(needed, stagingBytes * 2);
            cuMemAllocHost(staging, stagingBytes);
        }
        IntBuffer host = staging.getByteBuffer(0, needed).order(ByteOrder.nativeOrder()).asIntBuffer();
        host.put(batch.blocks()).position((int) (tableBytes / Integer.BYTES));
        host.put(batch.tableStart()).put(batch.lengths());
        tables.ensure(tableBytes);
        starts.ensure(startBytes);
        lengths.ensure(lengthBytes);
        partial.ensure(plan.maxSplits() > 1 ? plan.partialBytes(sequences, shape) : 4);
        stats.ensure(plan.maxSplits() > 1 ? plan.statsBytes(sequences, shape) : 8);
        sink.ensure(4);
        cuMemcpyHtoDAsync(tables.pointer, staging, tableBytes, stream);
        cuMemcpyHtoDAsync(starts.pointer, staging.withByteOffset(tableBytes), startBytes, stream);
        cuMemcpyHtoDAsync(lengths.pointer, staging.withByteOffset(tableBytes + startBytes), lengthBytes, stream);
        cuEventRecord(copied, stream);
        copyPending = true;
        this.batch = batch;
        this.plan = plan;
    }

    /** The batch loaded last; null before the first load. */
    public DecodeBatch batch() {
        return batch;
    }

    /** Its split plan. */
    public SplitPlan plan() {
        return plan;
    }

    CUdeviceptr tables() {
        return tables.pointer;
    }

    CUdeviceptr starts() {
        return starts.pointer;
    }

    CUdeviceptr lengths() {
        return lengths.pointer;
    }

    CUdeviceptr partial() {
        return partial.pointer;
    }

    CUdeviceptr stats() {
        return stats.pointer;
    }

    CUdeviceptr sink() {
        return sink.pointer;
    }

    /** Frees the device and pinned memory; waits for the device to finish with them (cuMemFree does). */
    @Override
    public void close() {
        if (closed) {
            return;
        }
        closed = true;
        for (Region region : new Region[] {tables, starts, lengths, partial, stats, sink}) {
            region.free();
        }
        if (stagingBytes > 0) {
            cuMemFreeHost(staging);
        }
        cuEventDestroy(copied);
    }

    /** One device allocation that only grows. */
    private static final class Region {
        final CUdeviceptr pointer = new CUdeviceptr();
        long bytes;

        void ensure(long needed) {
            if (needed <= bytes) {
                return;
            }
            free();
            long size = Math.max(needed, bytes * 2);
            cuMemAlloc(pointer, size);
            bytes = size;
        }

        void free() {
            if (bytes > 0) {
                cuMemFree(pointer);
                bytes = 0;
            }
        }
    }
}
