package io.kvpager.protocol;

import io.vertx.core.json.JsonObject;

/** The answer to {@code destroy-tensors}: whether the rank had tensors for the group to destroy. */
public record DestroyTensorsReply(boolean destroyed) {

    public static final String DESTROYED = "destroyed";

    public JsonObject toJson() {
        return new JsonObject().put(DESTROYED, destroyed);
    }

    public static DestroyTensorsReply fromJson(JsonObject json) {
        RequestBody body = new RequestBody(json);
        body.requireOnly(DESTROYED);
        return new DestroyTensorsReply(body.requireBoolean(DESTROYED));
    }
}
