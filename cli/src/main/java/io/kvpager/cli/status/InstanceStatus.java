package io.kvpager.cli.status;

import io.kvpager.cache.CacheStats;
import java.util.Objects;

/**
 * What one instance answered: its stats, or why it did not answer.
 *
 * @param instance the instance asked
 * @param stats its stats, or {@code null} when it did not answer
 * @param failure why it did not answer, or {@code null}
 */
public record InstanceStatus(String instance, CacheStats stats, String failure) {

    public InstanceStatus {
        Objects.requireNonNull(instance, "instance");
        if ((stats == null) == (failure == null)) {
            throw new IllegalArgumentException("an instance status has either stats or a failure");
        }
    }

    public static InstanceStatus of(CacheStats stats) {
        return new InstanceStatus(stats.instance(), stats, null);
    }

    public static InstanceStatus unreachable(String instance, String failure) {
        return new InstanceStatus(instance, null, failure);
    }

    /** Answered, ready, and every rank up. */
    public boolean healthy() {
        return stats != null && "ready".equals(stats.state()) && stats.healthy();
    }

    /**
     * The state to show: the cache's own, except {@code degraded} for a cache that calls itself
     * ready while a rank is down, and {@code unreachable} when it did not answer. Only
     * {@code ready} is ready; any other state is not, whatever its name.
     */
    public String state() {
        if (stats == null) {
            return "unreachable";
        }
        return "ready".equals(stats.state()) && !stats.healthy() ? "degraded" : stats.state();
    }
}
