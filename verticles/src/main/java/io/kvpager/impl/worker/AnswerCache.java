package io.kvpager.impl.worker;

import io.vertx.core.json.JsonObject;

import java.util.LinkedHashMap;
import java.util.Map;

/**
 * The answers to the most recent requests that carried a {@code requestId}, success or failure,
 * so that a retried request gets the first answer and changes nothing. Bounded: the least
 * recently used answer goes first. A {@code requestId} reused for a different request is refused
 * rather than answered with another request's answer.
 */
final class AnswerCache {

    /** Answers kept by default; far more than the requests a coordinator can have in flight. */
    static final int DEFAULT_CAPACITY = 4096;

    private record Remembered(JsonObject request, Answer answer) {
    }

    private final LinkedHashMap<String, Remembered> entries;

    AnswerCache(int capacity) {
        if (capacity < 1) {
            throw new IllegalArgumentException("an answer cache needs room for at least one answer, got " + capacity);
        }
        this.entries = new LinkedHashMap<>(Math.min(capacity, 1024), 0.75f, true) {
            @Override
            protected boolean removeEldestEntry(Map.Entry<String, Remembered> eldest) {
                return size() > capacity;
            }
        };
    }

    /**
     * The first answer to {@code requestId}, or {@code null} when it was not seen (or forgotten).
     *
     * @param request the action and body of the request now, compared with the first one
     * @throws IllegalArgumentException when {@code requestId} was first used for another request
     */
    Answer answered(String requestId, JsonObject request) {
        Remembered entry = entries.get(requestId);
        if (entry == null) {
            return null;
        }
        if (!entry.request.equals(request)) {
            throw new IllegalArgumentException("requestId '" + requestId + "' was already used for another request: "
                    + entry.request.encode());
        }
        return entry.answer;
    }

    void remember(String requestId, JsonObject request, Answer answer) {
        entries.put(requestId, new Remembered(request.copy(), answer));
    }

    int size() {
        return entries.size();
    }
}
