package io.kvpager.impl.worker;

import io.kvpager.FailureCode;
import io.kvpager.cache.RankFailure;
import io.kvpager.protocol.RankFailureReply;
import io.kvpager.protocol.WorkerProtocol;
import io.vertx.core.eventbus.DeliveryOptions;
import io.vertx.core.eventbus.Message;
import io.vertx.core.json.JsonObject;

/**
 * What a worker answers to one request: a reply body, or the rank's failure. Kept as a value so
 * that a retried request can be answered again with the very same answer.
 */
record Answer(JsonObject body, RankFailure failure) {

    private static final DeliveryOptions WITH_FIELDS = new DeliveryOptions().setCodecName(RankFailureReply.CODEC_NAME);

    static Answer reply(JsonObject body) {
        return new Answer(body, null);
    }

    static Answer failure(RankFailure failure) {
        return new Answer(null, failure);
    }

    boolean failed() {
        return failure != null;
    }

    /** The failure's code, or null for a reply. */
    FailureCode code() {
        return failure == null ? null : failure.code();
    }

    /** The failure's text, or null for a reply. */
    String text() {
        return failure == null ? null : failure.message();
    }

    /**
     * Sends this answer. The cached body itself goes, with no copy here: the event bus copies a JSON
     * body before a local consumer sees it and encodes it for a remote one, so no receiver can
     * change what a retried request is answered with. A failure goes with its fields to a
     * sender that asked for them ({@link WorkerProtocol#FAILURE_FIELDS_HEADER}), as a plain
     * code and text to any other.
     */
    void sendTo(Message<?> message) {
        if (failed() && WorkerProtocol.FAILURE_FIELDS_JSON.equals(message.headers().get(WorkerProtocol.FAILURE_FIELDS_HEADER))) {
            message.reply(new RankFailureReply(failure), WITH_FIELDS);
        } else if (failed()) {
            message.fail(failure.code().code(), failure.message());
        } else {
            message.reply(body);
        }
    }
}
