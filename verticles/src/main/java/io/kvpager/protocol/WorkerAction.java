package io.kvpager.protocol;

import java.util.List;

/** The actions a rank worker answers, by the name they carry in the {@code action} header. */
public enum WorkerAction implements BusAction {
    /** Reserve a group's virtual ranges (and map its zero page, when asked). */
    CREATE_TENSORS,
    /** Whether a group's tensors exist on this rank. */
    TENSORS_CREATED,
    /** Back page ids with physical memory, all or nothing. */
    MAP,
    /** Give page ids' physical memory back, all or nothing. */
    UNMAP,
    /**
     * Unmap and release each listed page id that is mapped, or partly mapped, whatever its state;
     * pages not mapped are left alone. How quarantined pages are recovered.
     */
    RELEASE_PAGES,
    /**
     * Keep this many page ids' worth of unmapped handles idle for a group, on top of its pool
     * options' bound: raised by its coordinator while pages churn, once the GPU's budget counts
     * them; lowered when the churn stops, releasing the surplus at once.
     */
    KEEP_HANDLES,
    /** Unmap everything of a group and free its virtual ranges. */
    DESTROY_TENSORS,
    /** Mapped pages and handles per group, device memory. */
    STATS,
    /** Per (layer, buffer): where the group's blocks are in this worker's address space. */
    VIEWS;

    /** Every action's name, in declaration order (the order of {@code docs/protocol.md}). */
    public static List<String> wireNames() {
        return BusAction.wireNames(WorkerAction.class);
    }

    /**
     * The action named {@code name}.
     *
     * @throws IllegalArgumentException for a missing or unknown name, listing the known ones
     */
    public static WorkerAction of(String name) {
        return BusAction.named(WorkerAction.class, name);
    }
}
