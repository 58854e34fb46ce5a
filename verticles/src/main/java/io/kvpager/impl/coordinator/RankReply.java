package io.kvpager.impl.coordinator;

import io.kvpager.protocol.RankTarget;
import io.kvpager.FailureCode;
import io.kvpager.cache.RankFailure;
import io.vertx.core.json.JsonObject;

/** One rank's answer to one fan-out request: its reply body, or how it failed. */
public record RankReply(RankTarget rank, JsonObject body, RankFailure failure) {

    public static RankReply ok(RankTarget rank, JsonObject body) {
        return new RankReply(rank, body == null ? new JsonObject() : body, null);
    }

    public static RankReply failed(RankTarget rank, FailureCode code, String message) {
        return failed(rank, new RankFailure(rank.name(), code, message));
    }

    public static RankReply failed(RankTarget rank, RankFailure failure) {
        return new RankReply(rank, null, failure);
    }

    public boolean succeeded() {
        return failure == null;
    }

    /** The failure's code, or {@code null} on success. */
    public FailureCode code() {
        return failure == null ? null : failure.code();
    }
}
