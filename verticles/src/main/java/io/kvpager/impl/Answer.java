package io.kvpager.impl;

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

    /** Sends this answer; a body is copied so that the cached one is never shared. */
    void sendTo(Message<?> message) {
        if (failed()) {
            message.fail(code.code(), text);
        } else {
            message.reply(body.copy());
        }
    }
}
