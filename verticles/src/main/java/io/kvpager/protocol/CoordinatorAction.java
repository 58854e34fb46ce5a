package io.kvpager.protocol;

import io.vertx.core.eventbus.DeliveryOptions;

import java.util.Arrays;
import java.util.List;

/**
 * The actions a cache's coordinator answers at {@link BusAddress#coordinator}, by the name they
 * carry in the {@code action} header; each has its request record in {@link CoordinatorRequest}
 * and, where it answers with fields, its reply in {@link CoordinatorReply}.
 */
public enum CoordinatorAction {
    /** Which pool the coordinator serves: {@link CoordinatorReply.Pool}. */
    POOL("pool"),
    /** The cache's {@link io.kvpager.cache.CacheStats}, as its JSON. */
    STATS("stats"),
    /** Blocks for a sequence: {@link CoordinatorRequest.Alloc}, {@link CoordinatorReply.Alloc}. */
    ALLOC("alloc"),
    /** Blocks back: {@link CoordinatorRequest.Free}. */
    FREE("free"),
    /** A new fence: {@link CoordinatorReply.Fence}. */
    FENCE("fence"),
    /** A fence's frees may now be handed out again: {@link CoordinatorRequest.Retired}. */
    RETIRED("retired"),
    /** How many blocks an alloc could take without new pages: {@link CoordinatorReply.Available}. */
    AVAILABLE("available"),
    /** A memory limit per rank: {@link CoordinatorRequest.Limit}, {@link CoordinatorReply.Limit}. */
    LIMIT("limit"),
    /** Unmap the reserve's and the free pages' memory. */
    TRIM("trim");

    /** The message header that names the action, the same as a worker's. */
    public static final String HEADER = WorkerProtocol.ACTION_HEADER;

    private final String wireName;

    CoordinatorAction(String wireName) {
        this.wireName = wireName;
    }

    /** The name in the {@code action} header, e.g. {@code alloc}. */
    public String wireName() {
        return wireName;
    }

    /** New delivery options that carry this action in the {@code action} header. */
    public DeliveryOptions delivery() {
        return new DeliveryOptions().addHeader(HEADER, wireName);
    }

    /** Every action's name, in declaration order. */
    public static List<String> wireNames() {
        return Arrays.stream(values()).map(CoordinatorAction::wireName).toList();
    }

    /**
     * The action named {@code name}.
     *
     * @throws IllegalArgumentException for a missing or unknown name, listing the known ones
     */
    public static CoordinatorAction of(String name) {
        if (name == null) {
            throw new IllegalArgumentException("the action header is missing; actions: " + known());
        }
        for (CoordinatorAction action : values()) {
            if (action.wireName.equals(name)) {
                return action;
            }
        }
        throw new IllegalArgumentException("unknown action '" + WireText.cut(name) + "'; actions: " + known());
    }

    private static String known() {
        return String.join(", ", wireNames());
    }
}
