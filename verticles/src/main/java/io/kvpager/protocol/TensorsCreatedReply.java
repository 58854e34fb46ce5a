package io.kvpager.protocol;

import io.vertx.core.json.JsonObject;

/**
 * The answer to {@code tensors-created}: {@code {"created": true}} or {@code false}, with the lease
 * the worker states for the request's owner ({@link WorkerProtocol#LEASE_MS}) where it follows a cluster.
 */
public record TensorsCreatedReply(boolean created) {

    public static final String CREATED = "created";

    public JsonObject toJson() {
        return new JsonObject().put(CREATED, created);
    }

    public static TensorsCreatedReply fromJson(JsonObject json) {
        RequestBody body = new RequestBody(json);
        body.requireOnly(CREATED, WorkerProtocol.LEASE_MS);
        return new TensorsCreatedReply(body.requireBoolean(CREATED));
    }
}
