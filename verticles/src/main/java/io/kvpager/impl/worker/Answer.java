package io.kvpager.impl.worker;

import io.kvpager.FailureCode;
import io.vertx.core.eventbus.Message;
import io.vertx.core.json.JsonObject;

/**
 * What a worker answers to one request: a reply body, or a failure code with its text. Kept as a
 * value so that a retried request can be answered again with the very same answer.
 */
record Answer(JsonObject body, FailureCode code, String text) {

    static Answer reply(JsonObject body) {
        return new Answer(body, null, null);
    }

    static Answer failure(FailureCode code, String text) {
        return new Answer(null, code, text);
    }

    boolean failed() {
        return code != null;
    }

    /**
     * Sends this answer. The cached body itself goes, with no copy here: the event bus copies a JSON
     * body before a local consumer sees it and encodes it for a remote one, so no receiver can
     * change what a retried request is answered with.
     */
    void sendTo(Message<?> message) {
        if (failed()) {
            message.fail(code.code(), text);
        } else {
            message.reply(body);
        }
    }
}
