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

import io.kvpager.Geometry;
import java.nio.ByteOrder;
import java.util.HashSet;
import java.util.Objects;
import java.util.Set;
import jcuda.Pointer;
import jcuda.driver.CUdeviceptr;
import jcuda.driver.CUevent;
import jcuda.driver.CUevent_flags;
import jcuda.driver.CUstream;

/**
 * Where the new tokens of one append go, on the device: one slot per token,
 * {@code block id × blockTokens + position in the block}, as the engine's block tables name them.
 * {@link PagedDecodeAttention#load(AppendSlots, long[], GroupBlocks, CUstream)} checks them against
 * the cache and the blocks the group holds, then copies them in on the caller's stream; the
 * buffers grow when an append needs more. One thread, one stream; {@link #close()} frees them.
 */
public final class AppendSlots implements AutoCloseable {

    private final CUdeviceptr slots = new CUdeviceptr();
    private long slotBytes;
    private final Pointer staging = new Pointer();
    private long stagingBytes;
    private final CUevent copied = new CUevent();
    private boolean copyPending;
    private int tokens;
    private boolean closed;

    AppendSlots() {
        cuEventCreate(copied, CUevent_flags.CU_EVENT_DISABLE_TIMING);
    }

    /**
     * Checks {@code slots} against a cache of {@code geometry} with {@code blockTokens} tokens per
     * block: at least one, each slot's block inside the pool and held by the group, no slot twice.
     *
     * @throws IllegalArgumentException naming the first token whose slot does not fit
     */
    static void check(long[] slots, int blockTokens, Geometry geometry, GroupBlocks held) {
        Objects.requireNonNull(slots, "slots");
        if (slots.length == 0) {
            throw new IllegalArgumentException("an append writes at least one token");
        }
        if (held.totalBlocks() != geometry.totalBlocks()) {
            throw new IllegalArgumentException("the held blocks are for a pool of " + held.totalBlocks()
                    + " blocks, the cache has " + geometry.totalBlocks());
        }
        Set<Long> seen = new HashSet<>();
        for (int i = 0; i < slots.length; i++) {
            long slot = slots[i];
            if (slot < 0 || slot / blockTokens >= geometry.totalBlocks()) {
                throw new IllegalArgumentException("token " + i + " has slot " + slot + ", outside the pool's 0.."
                        + ((long) geometry.totalBlocks() * blockTokens - 1) + " (block id × " + blockTokens + " + position)");
            }
            int block = (int) (slot / blockTokens);
            if (!held.holds(block)) {
                throw new IllegalArgumentException("token " + i + " has slot " + slot + " in block " + block
                        + ", which is not allocated to this group");
            }
            if (!seen.add(slot)) {
                throw new IllegalArgumentException("token " + i + " names slot " + slot + " again: two tokens of one append "
                        + "would race for it");
            }
        }
    }

    /** Queues the copy of checked {@code slots} on {@code stream}; waits only for this object's previous copy. */
    void load(long[] slots, CUstream stream) {
        if (closed) {
            throw new IllegalStateException("these append slots are closed");
        }
        long bytes = (long) slots.length * Long.BYTES;
        if (copyPending) {
            cuEventSynchronize(copied);
            copyPending = false;
        }
        if (stagingBytes < bytes) {
            if (stagingBytes > 0) {
                cuMemFreeHost(staging);
            }
            stagingBytes = Math.max(bytes, stagingBytes * 2);
            cuMemAllocHost(staging, stagingBytes);
        }
        if (slotBytes < bytes) {
            if (slotBytes > 0) {
                cuMemFree(this.slots);
            }
            slotBytes = Math.max(bytes, slotBytes * 2);
            cuMemAlloc(this.slots, slotBytes);
        }
        staging.getByteBuffer(0, bytes).order(ByteOrder.nativeOrder()).asLongBuffer().put(slots);
        cuMemcpyHtoDAsync(this.slots, staging, bytes, stream);
        cuEventRecord(copied, stream);
        copyPending = true;
        this.tokens = slots.length;
    }

    /** Tokens of the slots loaded last; 0 before the first load. */
    public int tokens() {
        return tokens;
    }

    CUdeviceptr pointer() {
        return slots;
    }

    /** Frees the device and pinned memory (cuMemFree waits for the device to finish with them). */
    @Override
    public void close() {
        if (closed) {
            return;
        }
        closed = true;
        if (slotBytes > 0) {
            cuMemFree(slots);
        }
        if (stagingBytes > 0) {
            cuMemFreeHost(staging);
        }
        cuEventDestroy(copied);
    }
}
