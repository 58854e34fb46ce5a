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
import static jcuda.driver.JCudaDriver.cuMemsetD32Async;

import java.nio.ByteOrder;
import java.nio.IntBuffer;
import jcuda.Pointer;
import jcuda.driver.CUdeviceptr;
import jcuda.driver.CUevent;
import jcuda.driver.CUevent_flags;
import jcuda.driver.CUstream;

/**
 * A decode batch on the device: its block tables, table starts, tile starts
 * ({@link StreamPlan#tileStarts}) and lengths, and the scratch its plan needs (partial results,
 * and one counter per sequence that the whole-block kernel leaves at zero after every
 * launch), for every layer of one step. {@link #load} copies a checked batch in on the
 * caller's stream from pinned memory, asynchronously; the buffers grow when a batch needs more and
 * are reused otherwise. Use on one thread at a time, and queue its launches on one stream (they
 * share the counters and scratch); {@link #close()} frees everything.
 */
public final class DeviceBatch implements AutoCloseable {

    private final Region tables = new Region();
    private final Region starts = new Region();
    private final Region tileStarts = new Region();
    private final Region counters = new Region();
    private final Region lengths = new Region();
    private final Region partial = new Region();
    private final Region stats = new Region();
    private final Region sink = new Region();
    private final Pointer staging = new Pointer();
    private long stagingBytes;
    private final CUevent copied = new CUevent();
    private boolean copyPending;
    private DecodeBatch batch;
    private LaunchPlan plan;
    private int kernel;
    private boolean closed;

    DeviceBatch() {
        cuEventCreate(copied, CUevent_flags.CU_EVENT_DISABLE_TIMING);
    }

    /**
     * Queues the copy of {@code batch} (already checked) on {@code stream}, with {@code plan}'s
     * scratch. Waits only for this object's previous copy, which the previous step's kernels
     * already waited for. {@code kernel} is the index of the launch shape that runs it.
     */
    void load(DecodeBatch batch, LaunchPlan plan, AttentionShape shape, CUstream stream, int kernel) {
        if (closed) {
            throw new IllegalStateException("this device batch is closed");
        }
        int entries = Math.max(1, batch.tableEntries());
        int sequences = batch.sequences();
        long tableBytes = (long) entries * Integer.BYTES;
        long startBytes = (long) (sequences + 1) * Integer.BYTES;
        long lengthBytes = (long) sequences * Integer.BYTES;
        long counterBytes = (long) sequences * Integer.BYTES;
        int[] tiles = StreamPlan.tileStarts(batch);
        if (copyPending) {
            cuEventSynchronize(copied);
            copyPending = false;
        }
        long needed = tableBytes + 2 * startBytes + lengthBytes;
        if (stagingBytes < needed) {
            if (stagingBytes > 0) {
                cuMemFreeHost(staging);
            }
            stagingBytes = Math.max(needed, stagingBytes * 2);
            cuMemAllocHost(staging, stagingBytes);
        }
        IntBuffer host = staging.getByteBuffer(0, needed).order(ByteOrder.nativeOrder()).asIntBuffer();
        host.put(batch.blocks()).position((int) (tableBytes / Integer.BYTES));
        host.put(batch.tableStart()).put(tiles).put(batch.lengths());
        tables.ensure(tableBytes);
        starts.ensure(startBytes);
        tileStarts.ensure(startBytes);
        lengths.ensure(lengthBytes);
        counters.ensure(counterBytes);
        partial.ensure(Math.max(4, plan.partialBytes(sequences, shape)));
        stats.ensure(Math.max(8, plan.statsBytes(sequences, shape)));
        sink.ensure(4);
        cuMemcpyHtoDAsync(tables.pointer, staging, tableBytes, stream);
        cuMemcpyHtoDAsync(starts.pointer, staging.withByteOffset(tableBytes), startBytes, stream);
        cuMemcpyHtoDAsync(tileStarts.pointer, staging.withByteOffset(tableBytes + startBytes), startBytes, stream);
        cuMemcpyHtoDAsync(lengths.pointer, staging.withByteOffset(tableBytes + 2 * startBytes), lengthBytes, stream);
        cuMemsetD32Async(counters.pointer, 0, counterBytes / Integer.BYTES, stream);
        cuEventRecord(copied, stream);
        copyPending = true;
        this.batch = batch;
        this.plan = plan;
        this.kernel = kernel;
    }

    /** The batch loaded last; null before the first load. */
    public DecodeBatch batch() {
        return batch;
    }

    /** Its launch plan. */
    public LaunchPlan plan() {
        return plan;
    }

    /** Which of the operation's launch shapes runs it. */
    int kernel() {
        return kernel;
    }

    CUdeviceptr tables() {
        return tables.pointer;
    }

    CUdeviceptr starts() {
        return starts.pointer;
    }

    CUdeviceptr tileStarts() {
        return tileStarts.pointer;
    }

    CUdeviceptr counters() {
        return counters.pointer;
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
        for (Region region : new Region[] {tables, starts, tileStarts, counters, lengths, partial, stats, sink}) {
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
