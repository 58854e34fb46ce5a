package io.kvpager.protocol;

import java.util.List;

/**
 * The actions a cache's coordinator answers at {@link BusAddress#coordinator}, by the name they
 * carry in the {@code action} header; each has its request record in {@link CoordinatorRequest}
 * and, where it answers with fields, its reply in {@link CoordinatorReply}.
 */
public enum CoordinatorAction implements BusAction {
    /** Which pool the coordinator serves: {@link CoordinatorReply.Pool}. */
    POOL,
    /** The cache's {@link io.kvpager.cache.CacheStats}, as its JSON. */
    STATS,
    /** Blocks for a sequence: {@link CoordinatorRequest.Alloc}, {@link CoordinatorReply.Alloc}. */
    ALLOC,
    /** Blocks back: {@link CoordinatorRequest.Free}. */
    FREE,
    /** A new fence: {@link CoordinatorReply.Fence}. */
    FENCE,
    /** A fence's frees may now be handed out again: {@link CoordinatorRequest.Retired}. */
    RETIRED,
    /** How many blocks an alloc could take without new pages: {@link CoordinatorReply.Available}. */
    AVAILABLE,
    /** A memory limit per rank: {@link CoordinatorRequest.Limit}, {@link CoordinatorReply.Limit}. */
    LIMIT,
    /** Unmap the reserve's and the free pages' memory. */
    TRIM;

    /** Every action's name, in declaration order. */
    public static List<String> wireNames() {
        return BusAction.wireNames(CoordinatorAction.class);
    }

    /**
     * The action named {@code name}.
     *
     * @throws IllegalArgumentException for a missing or unknown name, listing the known ones
     */
    public static CoordinatorAction of(String name) {
        return BusAction.named(CoordinatorAction.class, name);
    }
}
