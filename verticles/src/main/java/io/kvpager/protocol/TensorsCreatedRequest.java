package io.kvpager.protocol;

import io.vertx.core.json.JsonObject;

import static io.kvpager.protocol.RequestFields.GROUP;
import static io.kvpager.protocol.RequestFields.OWNER;

/**
 * {@code tensors-created}: whether the group's tensors exist on the rank, and belong to
 * {@code owner} when it is not null.
 */
public record TensorsCreatedRequest(int group, Owner owner) {

    public JsonObject toJson() {
        JsonObject json = new JsonObject().put(GROUP, group);
        return owner == null ? json : json.put(OWNER, owner.toString());
    }

    public static TensorsCreatedRequest fromJson(JsonObject json) {
        RequestBody body = new RequestBody(json);
        return new TensorsCreatedRequest(body.requireInt(GROUP, 0, Integer.MAX_VALUE), body.optionalOwner(OWNER));
    }
}
