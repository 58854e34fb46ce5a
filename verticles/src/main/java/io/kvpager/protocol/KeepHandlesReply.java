package io.kvpager.protocol;

import io.vertx.core.json.JsonObject;

/**
 * The answer to {@code keep-handles}: the group's {@code idlePages} now, and how many idle handles
 * of the group's size the rank holds after it (every group of that size shares them).
 */
public record KeepHandlesReply(int idlePages, int idleHandles) {

    public static final String IDLE_PAGES = KeepHandlesRequest.IDLE_PAGES;
    public static final String IDLE_HANDLES = "idleHandles";

    public JsonObject toJson() {
        return new JsonObject().put(IDLE_PAGES, idlePages).put(IDLE_HANDLES, idleHandles);
    }

    public static KeepHandlesReply fromJson(JsonObject json) {
        RequestBody body = new RequestBody(json);
        body.requireOnly(IDLE_PAGES, IDLE_HANDLES);
        return new KeepHandlesReply(body.requireInt(IDLE_PAGES, 0, Integer.MAX_VALUE), body.requireInt(IDLE_HANDLES, 0, Integer.MAX_VALUE));
    }
}
