package io.kvpager.protocol;

import io.vertx.core.json.JsonObject;

import static io.kvpager.protocol.RequestFields.GROUP;
import static io.kvpager.protocol.RequestFields.OWNER;

/** {@code destroy-tensors}: unmap everything of {@code owner}'s group and free its virtual ranges. */
public record DestroyTensorsRequest(int group, Owner owner) {

    public JsonObject toJson() {
        return new JsonObject().put(GROUP, group).put(OWNER, owner.toString());
    }

    public static DestroyTensorsRequest fromJson(JsonObject json) {
        RequestBody body = new RequestBody(json);
        return new DestroyTensorsRequest(body.requireInt(GROUP, 0, Integer.MAX_VALUE), body.requireOwner(OWNER));
    }
}
