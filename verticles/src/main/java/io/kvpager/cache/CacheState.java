package io.kvpager.cache;

import java.util.Locale;

/**
 * Where a cache is in its life, as {@link CacheStats#state()} reports it. Only {@link #READY} is
 * ready; JSON, the command line and the metrics write the lower-case {@link #jsonName()}.
 */
public enum CacheState {
    /** Deployed; the ranks are still creating their tensors. */
    STARTING,
    /** Started, every rank answers and the background refill works. */
    READY,
    /** Started, but a rank is down or the background refill keeps failing: allocations may miss. */
    DEGRADED,
    /** The start failed; every {@code alloc} fails with its cause. */
    FAILED,
    /** Closed. */
    CLOSED;

    /** The name JSON and every output use: {@code ready}. */
    public String jsonName() {
        return name().toLowerCase(Locale.ROOT);
    }

    /**
     * The state whose {@link #jsonName()} is {@code name}.
     *
     * @throws IllegalArgumentException for any other name, listing the known ones
     */
    public static CacheState ofJsonName(String name) {
        for (CacheState state : values()) {
            if (state.jsonName().equals(name)) {
                return state;
            }
        }
        throw new IllegalArgumentException("state '" + name + "' is none of starting, ready, degraded, failed, closed");
    }

    @Override
    public String toString() {
        return jsonName();
    }
}
