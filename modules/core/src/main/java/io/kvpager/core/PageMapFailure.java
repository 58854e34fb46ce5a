package io.kvpager.core;

import io.kvpager.MissReason;

/**
 * A failed {@link PageMapper} call, read by the {@link PageLedger}: the miss it means for the
 * allocation that needed it, and the pages whose state is no longer known (compensation failed on
 * some rank) so that they are quarantined instead of handed out or counted free.
 */
public class PageMapFailure extends RuntimeException {

    private final MissReason reason;
    private final int[] quarantined;
    private final boolean gpuShare;

    public PageMapFailure(MissReason reason, String message, int[] quarantined, Throwable cause) {
        this(reason, message, quarantined, cause, false);
    }

    private PageMapFailure(MissReason reason, String message, int[] quarantined, Throwable cause, boolean gpuShare) {
        super(message, cause);
        this.reason = reason;
        this.quarantined = quarantined == null ? new int[0] : quarantined.clone();
        this.gpuShare = gpuShare;
    }

    /**
     * A {@link MissReason#GPU_SHARE} refusal of the GPU's budget: the pool's share of a GPU cannot
     * grow, as the other pools there hold its memory.
     */
    public static PageMapFailure gpuShare(String message) {
        return new PageMapFailure(MissReason.GPU_SHARE, message, null, null, true);
    }

    /** Whether this is a refusal of the GPU's budget ({@link #gpuShare(String)}) rather than the pool's own limit. */
    public boolean isGpuShare() {
        return gpuShare;
    }

    public MissReason reason() {
        return reason;
    }

    /** Page ids that may still be mapped on some rank and must never be handed out. */
    public int[] quarantined() {
        return quarantined.clone();
    }
}
