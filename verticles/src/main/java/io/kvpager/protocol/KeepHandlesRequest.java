package io.kvpager.protocol;

import io.vertx.core.json.JsonObject;

import static io.kvpager.protocol.RequestFields.GROUP;
import static io.kvpager.protocol.RequestFields.OWNER;

/**
 * {@code keep-handles}: keep {@code idlePages} page ids' worth of unmapped handles idle for
 * {@code owner}'s group, on top of its {@code handlePool.boundPages}.
 */
public record KeepHandlesRequest(int group, Owner owner, int idlePages) {

    public static final String IDLE_PAGES = "idlePages";

    public JsonObject toJson() {
        return new JsonObject().put(GROUP, group).put(OWNER, owner.toString()).put(IDLE_PAGES, idlePages);
    }

    /** The group's own limit on {@code idlePages} is the worker's to check: it knows the group's pages. */
    public static KeepHandlesRequest fromJson(JsonObject json) {
        RequestBody body = new RequestBody(json);
        return new KeepHandlesRequest(body.requireInt(GROUP, 0, Integer.MAX_VALUE), body.requireOwner(OWNER),
                body.requireInt(IDLE_PAGES, 0, Integer.MAX_VALUE));
    }
}
