package io.kvpager.protocol;
import io.vertx.core.eventbus.DeliveryOptions;
import java.util.Arrays;
import java.util.List;


/** The actions a rank worker answers, by the name they carry in the {@code action} header. */
public enum WorkerAction {
    /** Reserve a group's virtual ranges (and map its zero page, when asked). */
    CREATE_TENSORS(WorkerProtocol.CREATE_TENSORS),
    /** Whether a group's tensors exist on this rank. */
    TENSORS_CREATED(WorkerProtocol.TENSORS_CREATED),
    /** Back page ids with physical memory, all or nothing. */
    MAP(WorkerProtocol.MAP),
    /** Give page ids' physical memory back, all or nothing. */
    UNMAP(WorkerProtocol.UNMAP),
    /**
     * Unmap and release each listed page id that is mapped, or partly mapped, whatever its state;
     * pages not mapped are left alone. How quarantined pages are recovered.
     */
    RELEASE_PAGES(WorkerProtocol.RELEASE_PAGES),
    /**
     * Keep this many page ids' worth of unmapped handles idle for a group, on top of its pool
     * options' bound: raised by its coordinator while pages churn, once the GPU's budget counts
     * them; lowered when the churn stops, releasing the surplus at once.
     */
    KEEP_HANDLES(WorkerProtocol.KEEP_HANDLES),
    /** Unmap everything of a group and free its virtual ranges. */
    DESTROY_TENSORS(WorkerProtocol.DESTROY_TENSORS),
    /** Mapped pages and handles per group, device memory. */
    STATS(WorkerProtocol.STATS),
    /** Per (layer, buffer): where the group's blocks are in this worker's address space. */
    VIEWS(WorkerProtocol.VIEWS);

    /** The message header that names the action. */
    public static final String HEADER = WorkerProtocol.ACTION_HEADER;

    private final String wireName;

    WorkerAction(String wireName) {
        this.wireName = wireName;
    }

    /** The name in the {@code action} header, e.g. {@code create-tensors}. */
    public String wireName() {
        return wireName;
    }

    /** New delivery options that carry this action in the {@code action} header. */
    public DeliveryOptions delivery() {
        return new DeliveryOptions().addHeader(HEADER, wireName);
    }

    /** Every action's name, in declaration order (the order of {@code docs/protocol.md}). */
    public static List<String> wireNames() {
        return Arrays.stream(values()).map(WorkerAction::wireName).toList();
    }

    /** Whether {@code name} is one of these actions' names; false for null. */
    public static boolean isKnown(String name) {
        for (WorkerAction action : values()) {
            if (action.wireName.equals(name)) {
                return true;
            }
        }
        return false;
    }

    /**
     * The action named {@code name}.
     *
     * @throws IllegalArgumentException for a missing or unknown name, listing the known ones
     */
    public static WorkerAction of(String name) {
        if (name == null) {
            throw new IllegalArgumentException("the '" + HEADER + "' header is missing; expected one of " + known());
        }
        for (WorkerAction action : values()) {
            if (action.wireName.equals(name)) {
                return action;
            }
        }
        throw new IllegalArgumentException("unknown action '" + WireText.cut(name) + "'; expected one of " + known());
    }

    private static String known() {
        return String.join(", ", wireNames());
    }
}
