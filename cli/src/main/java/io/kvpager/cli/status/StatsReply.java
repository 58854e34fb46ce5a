package io.kvpager.cli.status;

import io.kvpager.LimitResult;
import io.vertx.core.json.JsonObject;

/**
 * Reads the coordinator's {@code limit} replies back into a {@link LimitResult} (its {@code stats}
 * replies are read by {@link io.kvpager.cache.CacheStats#fromJson}). A field that is missing or of
 * the wrong type is an {@link IllegalArgumentException} naming it, so a peer of another version is
 * reported as such rather than shown as zeros.
 */
public final class StatsReply {

    private StatsReply() {
    }

    public static LimitResult limitResult(JsonObject json) {
        String outcome = string(json, "outcome");
        LimitResult.Outcome parsed;
        try {
            parsed = LimitResult.Outcome.valueOf(outcome);
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException("outcome '" + outcome + "' is none of APPLIED, DEFERRED, STALE, CONFLICT");
        }
        return new LimitResult(parsed, number(json, "revision"), number(json, "limitBytes"), (int) number(json, "effectivePages"),
                (int) number(json, "inUsePages"));
    }

    private static long number(JsonObject json, String key) {
        if (!(json.getValue(key) instanceof Number n)) {
            throw new IllegalArgumentException(key + " must be a number, got " + json.getValue(key));
        }
        return n.longValue();
    }

    private static String string(JsonObject json, String key) {
        if (!(json.getValue(key) instanceof String s)) {
            throw new IllegalArgumentException(key + " must be text, got " + json.getValue(key));
        }
        return s;
    }
}
