package io.kvpager.protocol;

import io.vertx.core.json.JsonObject;

/**
 * {@code stats}: the rank's groups, handles and device memory. It has no fields of its own; a
 * worker still checks {@code pp} and {@code tp} when they are there, and ignores anything else.
 */
public record StatsRequest() implements WorkerRequest {

    @Override
    public WorkerAction action() {
        return WorkerAction.STATS;
    }

    /** Not a group's: {@code -1}. */
    @Override
    public int group() {
        return -1;
    }

    @Override
    public Owner owner() {
        return null;
    }


    public JsonObject toJson() {
        return new JsonObject();
    }

    public static StatsRequest fromJson(JsonObject json) {
        return new StatsRequest();
    }
}
