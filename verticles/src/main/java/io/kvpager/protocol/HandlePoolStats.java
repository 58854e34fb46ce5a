package io.kvpager.protocol;

import io.vertx.core.json.JsonObject;

/**
 * The rank's idle handles of one size in a {@code stats} answer: how many are idle, the bound the
 * groups asked for, how many are lent to mapped pages, and the creates, reuses and releases so far.
 */
public record HandlePoolStats(long handleBytes, int idle, int bound, int lent, long creates, long reuses, long releases) {

    public static final String HANDLE_BYTES = "handleBytes";
    public static final String IDLE = "idle";
    public static final String BOUND = "bound";
    public static final String LENT = "lent";
    public static final String CREATES = "creates";
    public static final String REUSES = "reuses";
    public static final String RELEASES = "releases";

    public JsonObject toJson() {
        return new JsonObject().put(HANDLE_BYTES, handleBytes).put(IDLE, idle).put(BOUND, bound).put(LENT, lent)
                .put(CREATES, creates).put(REUSES, reuses).put(RELEASES, releases);
    }

    public static HandlePoolStats fromJson(JsonObject json) {
        return read(new RequestBody(json));
    }

    static HandlePoolStats read(RequestBody body) {
        body.requireOnly(HANDLE_BYTES, IDLE, BOUND, LENT, CREATES, REUSES, RELEASES);
        return new HandlePoolStats(body.requireLong(HANDLE_BYTES, 1, Long.MAX_VALUE), body.requireInt(IDLE, 0, Integer.MAX_VALUE),
                body.requireInt(BOUND, 0, Integer.MAX_VALUE), body.requireInt(LENT, 0, Integer.MAX_VALUE),
                body.requireLong(CREATES, 0, Long.MAX_VALUE), body.requireLong(REUSES, 0, Long.MAX_VALUE),
                body.requireLong(RELEASES, 0, Long.MAX_VALUE));
    }
}
