package io.kvpager.cli.demo;

import io.kvpager.Allocation;
import io.kvpager.MissReason;

/**
 * Why an allocation of the demo missed, in the words a reader of the summary needs: the cache's
 * {@link MissReason}, except that a {@code LIMIT} miss is told apart by its cause. A model's own
 * limit ({@code --limit}) and a refusal of the GPU's broker (the other models hold the GPU's
 * memory) are one reason to an engine, which preempts either way, but not to a person reading why
 * a model was starved.
 */
enum DemoMiss {
    /** A rank's device had no memory for a new page. */
    OUT_OF_MEMORY("the device had no memory for a new page"),
    /** The model's own memory limit (--limit) is reached. */
    LIMIT("the model's own --limit is reached"),
    /** The GPU's broker refused the pool more of the GPU: the other models hold it. */
    GPU_SHARE("the other models hold the GPU's memory (its broker refused a larger share)"),
    /** Every virtual page id of the pool is in use. */
    NO_PAGES("every page id of the pool is in use"),
    /** Mapping failed on some rank for another reason. */
    MAP_FAILED("mapping failed on a rank"),
    /** A rank the pool needs is down. */
    RANK_DOWN("a rank is down");

    private final String meaning;

    DemoMiss(String meaning) {
        this.meaning = meaning;
    }

    String meaning() {
        return meaning;
    }

    /** The demo's reason for a miss. */
    static DemoMiss of(Allocation miss) {
        MissReason reason = miss.missReason();
        return switch (reason) {
            case OUT_OF_MEMORY -> OUT_OF_MEMORY;
            case LIMIT -> LIMIT;
            case GPU_SHARE -> GPU_SHARE;
            case NO_PAGES -> NO_PAGES;
            case MAP_FAILED -> MAP_FAILED;
            case RANK_DOWN -> RANK_DOWN;
        };
    }
}
