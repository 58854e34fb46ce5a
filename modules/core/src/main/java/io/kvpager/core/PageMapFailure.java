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

    public PageMapFailure(MissReason reason, String message, int[] quarantined, Throwable cause) {
        super(message, cause);
        this.reason = reason;
        this.quarantined = quarantined == null ? new int[0] : quarantined.clone();
    }

    public MissReason reason() {
        return reason;
    }

    /** Page ids that may still be mapped on some rank and must never be handed out. */
    public int[] quarantined() {
        return quarantined.clone();
    }
}
