package io.kvpager.protocol;

import io.vertx.core.json.JsonObject;

/**
 * {@code stats}: the rank's groups, handles and device memory. It has no fields of its own; a
 * worker still checks {@code pp} and {@code tp} when they are there, and ignores anything else.
 */
public record StatsRequest() {

    public JsonObject toJson() {
        return new JsonObject();
    }

    public static StatsRequest fromJson(JsonObject json) {
        return new StatsRequest();
    }
}
