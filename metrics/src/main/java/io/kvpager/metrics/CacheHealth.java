package io.kvpager.metrics;

import io.kvpager.cache.CacheStats;
import io.kvpager.cache.RankStats;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;

/**
 * A cache's health in three states, for probes and dashboards: {@link State#READY} only when the
 * cache says {@code ready} and every rank answers; {@link State#FAILED} when it failed or closed,
 * or did not answer; {@link State#DEGRADED} for anything else (a rank down, starting, a refill
 * that keeps failing, or a state this version does not know), with the reason.
 *
 * @param state the health
 * @param reason why it is not ready, or {@code null} when it is
 */
public record CacheHealth(State state, String reason) {

    /** The three health states. */
    public enum State { READY, DEGRADED, FAILED }

    public CacheHealth {
        Objects.requireNonNull(state, "state");
    }

    /** The health that {@code stats} show. */
    public static CacheHealth of(CacheStats stats) {
        List<String> down = new ArrayList<>();
        for (RankStats rank : stats.ranks()) {
            if (!rank.up()) {
                down.add(rank.failure() != null ? rank.failure().toString() : rank.rank() + " is down");
            }
        }
        String state = stats.state();
        if ("failed".equals(state) || "closed".equals(state)) {
            return new CacheHealth(State.FAILED, stats.startFailure() != null ? stats.startFailure() : "the cache is " + state);
        }
        if ("ready".equals(state) && down.isEmpty()) {
            return new CacheHealth(State.READY, null);
        }
        List<String> reasons = new ArrayList<>();
        if (!"ready".equals(state)) {
            reasons.add("the cache is " + state);
        }
        reasons.addAll(down);
        if (stats.refillFailure() != null) {
            reasons.add(stats.refillFailure());
        }
        return new CacheHealth(State.DEGRADED, String.join("; ", reasons));
    }

    /** The health of a cache whose stats could not be read. */
    public static CacheHealth unanswered(Throwable failure) {
        return new CacheHealth(State.FAILED, "no stats: " + failure.getMessage());
    }

    /** The state's name in lower case, as {@code /health} and {@code status} show it. */
    public String stateName() {
        return state.name().toLowerCase(java.util.Locale.ROOT);
    }
}
