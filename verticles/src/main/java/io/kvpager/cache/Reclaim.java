package io.kvpager.cache;

import io.vertx.codegen.annotations.GenIgnore;
import io.vertx.core.json.JsonObject;

/**
 * A request to the engine to give memory back: this cache holds more of a GPU than its guaranteed
 * share, and another cache on that GPU, below its own, was refused for want of it. The engine
 * frees {@link #blocks()} blocks with {@link KvCache#free} (preempting sequences, oldest or
 * cheapest first, as it sees fit) within {@link #deadlineMs()}; the cache unmaps the pages left
 * empty and gives their budget back. A cache that has not given back by then is capped at its
 * guarantee: it gets no memory above it until it is under it. A cache at or below its guarantee is
 * never asked (docs/sharing.md).
 *
 * <p>Raised on the handler set with {@link KvCache#reclaimHandler} (on the RxJava API too) and on
 * the event bus at {@link #address(String)} as {@link #toJson()}.
 *
 * @param blocks how many blocks the engine should free, at least 1
 * @param deadlineMs how long the engine has, in ms from when it was asked, at least 1
 * @param reason why, in words: the GPU, and the cache that needs the memory
 */
@GenIgnore(GenIgnore.PERMITTED_TYPE)
public record Reclaim(int blocks, long deadlineMs, String reason) {

    public Reclaim {
        if (blocks < 1 || deadlineMs < 1) {
            throw new IllegalArgumentException("a reclaim asks for at least 1 block within at least 1 ms, got " + blocks
                    + " blocks within " + deadlineMs + " ms");
        }
        reason = reason == null ? "" : reason;
    }

    /** The event-bus address where the reclaims of cache {@code instance} are published. */
    public static String address(String instance) {
        return "kvpager." + instance + ".reclaim";
    }

    /** {@code {"blocks": n, "deadlineMs": d, "reason": "..."}}. */
    public JsonObject toJson() {
        return new JsonObject().put("blocks", blocks).put("deadlineMs", deadlineMs).put("reason", reason);
    }

    /** Reads {@link #toJson()}'s form; a value that is not one fails with an {@link IllegalArgumentException}. */
    public static Reclaim fromJson(JsonObject json) {
        try {
            return new Reclaim(json.getInteger("blocks"), json.getLong("deadlineMs"), json.getString("reason"));
        } catch (ClassCastException | NullPointerException e) {
            throw new IllegalArgumentException("not a reclaim: " + json, e);
        }
    }
}
