package io.kvpager.protocol;

import io.vertx.core.json.JsonObject;

import static io.kvpager.protocol.RequestFields.GROUP;

/** {@code views}: where the group's blocks are in the worker's address space. */
public record ViewsRequest(int group) {

    public JsonObject toJson() {
        return new JsonObject().put(GROUP, group);
    }

    public static ViewsRequest fromJson(JsonObject json) {
        return new ViewsRequest(new RequestBody(json).requireInt(GROUP, 0, Integer.MAX_VALUE));
    }
}
