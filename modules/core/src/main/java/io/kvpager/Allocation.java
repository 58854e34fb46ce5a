package io.kvpager;

import io.vertx.codegen.annotations.GenIgnore;

import java.util.Arrays;
import java.util.Objects;

/**
 * The answer to {@code alloc(n)}: either {@code n} block ids, or a miss with its reason. A miss is
 * a normal outcome (the engine preempts and retries), not a failure.
 */
@GenIgnore(GenIgnore.PERMITTED_TYPE)
public final class Allocation {

    private static final int[] NONE = new int[0];

    private final int[] blocks;
    private final MissReason miss;
    private final String detail;
    private final boolean gpuShare;
    private final long reclaimWaitNanos;
    private final String incarnation;

    private Allocation(int[] blocks, MissReason miss, String detail, boolean gpuShare, long reclaimWaitNanos, String incarnation) {
        this.blocks = blocks;
        this.miss = miss;
        this.detail = detail;
        this.gpuShare = gpuShare;
        this.reclaimWaitNanos = reclaimWaitNanos;
        this.incarnation = incarnation;
    }

    private Allocation(int[] blocks, MissReason miss, String detail, boolean gpuShare) {
        this(blocks, miss, detail, gpuShare, 0, null);
    }

    /** An allocation of these block ids; the array is owned by the allocation from now on. */
    public static Allocation of(int[] blocks) {
        return new Allocation(Objects.requireNonNull(blocks, "blocks"), null, "", false);
    }

    /** A miss: no blocks, with why. */
    public static Allocation miss(MissReason reason, String detail) {
        return new Allocation(NONE, Objects.requireNonNull(reason, "reason"), detail == null ? "" : detail, false);
    }

    /**
     * A {@link MissReason#GPU_SHARE} miss: the GPU's budget refused it: the other pools on the GPU hold
     * its memory, while this pool's own limit still has room.
     */
    public static Allocation gpuShareMiss(String detail) {
        return new Allocation(NONE, MissReason.GPU_SHARE, detail == null ? "" : detail, true);
    }

    /**
     * This allocation, recording that it waited {@code nanos} for GPU memory reclaimed from other
     * pools: from its first refusal to its answer.
     *
     * @throws IllegalArgumentException for a negative wait
     */
    public Allocation withReclaimWait(long nanos) {
        if (nanos < 0) {
            throw new IllegalArgumentException("a reclaim wait cannot be " + nanos + " ns");
        }
        return new Allocation(blocks, miss, detail, gpuShare, nanos, incarnation);
    }

    /**
     * This allocation, recording the coordinator incarnation that handed its blocks out. Block ids
     * are positions in the pool's tensors, so a coordinator that comes back as a new incarnation
     * hands the same ids out again; a free that names the incarnation is refused by any other one
     * instead of freeing a block that now belongs to someone else.
     *
     * @throws IllegalArgumentException for a blank incarnation
     */
    public Allocation withIncarnation(String incarnation) {
        if (incarnation == null || incarnation.isBlank()) {
            throw new IllegalArgumentException("an incarnation must be named, got '" + incarnation + "'");
        }
        return new Allocation(blocks, miss, detail, gpuShare, reclaimWaitNanos, incarnation);
    }

    /**
     * The coordinator incarnation ({@code <nodeId>#<epoch>}) that handed these blocks out, to be
     * given back with them when they are freed; {@code null} where none was recorded (a miss).
     */
    public String incarnation() {
        return incarnation;
    }

    /**
     * For an allocation first refused for want of GPU memory and then answered after memory was
     * reclaimed from pools above their guaranteed share, the time from that refusal to the answer,
     * in nanoseconds; 0 for one that waited for no reclaim.
     */
    public long reclaimWaitNanos() {
        return reclaimWaitNanos;
    }

    /** The block ids handed out; empty on a miss. */
    public int[] blocks() {
        return blocks.clone();
    }

    /** Number of blocks handed out. */
    public int size() {
        return blocks.length;
    }

    /** Block {@code i} of this allocation. */
    public int block(int i) {
        return blocks[i];
    }

    public boolean isMiss() {
        return miss != null;
    }

    /** The reason of a miss, or {@code null} when blocks were handed out. */
    public MissReason missReason() {
        return miss;
    }

    /**
     * Whether the GPU's budget refused this miss (the other pools hold the GPU's memory): its reason
     * is {@link MissReason#GPU_SHARE}, not the pool's own {@link MissReason#LIMIT}.
     */
    public boolean gpuShare() {
        return gpuShare;
    }

    /** What caused the miss, in words (e.g. the rank's driver error); empty otherwise. */
    public String detail() {
        return detail;
    }

    @Override
    public String toString() {
        return isMiss() ? "miss(" + miss + (detail.isEmpty() ? "" : ": " + detail) + ")"
                : "blocks" + Arrays.toString(blocks);
    }
}
