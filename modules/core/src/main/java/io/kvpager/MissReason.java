package io.kvpager;

/** Why an allocation came back without blocks. The engine preempts and retries on any of these. */
public enum MissReason {
    /** A rank's device had no memory for a new page. */
    OUT_OF_MEMORY,
    /** The pool's memory limit is reached. */
    LIMIT,
    /** Every virtual page id of the pool is in use. */
    NO_PAGES,
    /** Mapping new pages failed on some rank for another reason; the detail says which. */
    MAP_FAILED,
    /** A rank the pool needs is down. */
    RANK_DOWN,
    /**
     * The GPU's budget refused: the other pools on the GPU hold its memory (its broker refused the
     * pool a larger share), while the pool's own limit still has room. Never reaches the device.
     */
    GPU_SHARE
}
