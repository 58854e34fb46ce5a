package io.kvpager.protocol;

import io.vertx.core.json.JsonObject;

import java.util.Arrays;

/**
 * A request to a cache's coordinator, one record per {@link CoordinatorAction}: what a client
 * writes with {@link #toJson()} and the coordinator reads back with {@link #fromJson}, strictly
 * (a missing or mistyped field is an {@link IllegalArgumentException} naming it, a 400). The
 * values themselves (a block count of 0, a negative limit, a fence never opened) are the
 * coordinator's to judge.
 */
public sealed interface CoordinatorRequest {

    String BLOCKS = "blocks";
    String NEAR = "near";
    String OWNER = "owner";
    String FENCE = "fence";
    String BYTES = "bytes";
    String REVISION = "revision";
    String RANKS_WITHIN_MS = "ranksWithinMs";

    /** The action this request is sent with. */
    CoordinatorAction action();

    /** The body; empty for the actions without fields. */
    default JsonObject toJson() {
        return new JsonObject();
    }

    /** Reads the body of {@code action}. */
    static CoordinatorRequest fromJson(CoordinatorAction action, JsonObject json) {
        RequestBody body = new RequestBody(json);
        return switch (action) {
            case POOL -> new Pool();
            case STATS -> new Stats(body.optionalLong(RANKS_WITHIN_MS, 1, Long.MAX_VALUE, 0));
            case ALLOC -> new Alloc(body.requireInt(BLOCKS, Integer.MIN_VALUE, Integer.MAX_VALUE),
                    body.optionalInt(NEAR, 0, Integer.MAX_VALUE, Alloc.ANYWHERE));
            case FREE -> new Free(body.requireInts(BLOCKS, Integer.MIN_VALUE, Integer.MAX_VALUE), body.optionalString(OWNER));
            case FENCE -> new Fence();
            case RETIRED -> new Retired(body.requireLong(FENCE, Long.MIN_VALUE, Long.MAX_VALUE));
            case AVAILABLE -> new Available();
            case LIMIT -> new Limit(body.requireLong(BYTES, Long.MIN_VALUE, Long.MAX_VALUE), revision(json, body));
            case TRIM -> new Trim();
        };
    }

    /** A revision that is there must be a number: a null one is not "the next revision", which is left out. */
    private static Long revision(JsonObject json, RequestBody body) {
        if (!json.containsKey(REVISION)) {
            return null;
        }
        if (json.getValue(REVISION) == null) {
            throw new IllegalArgumentException(REVISION + " must be an integer, got null; leave it out for the next revision");
        }
        return body.requireLong(REVISION, Long.MIN_VALUE, Long.MAX_VALUE);
    }

    /** {@code pool}: which pool the coordinator serves. */
    record Pool() implements CoordinatorRequest {
        @Override
        public CoordinatorAction action() {
            return CoordinatorAction.POOL;
        }
    }

    /**
     * {@code stats}: the cache's stats; {@code ranksWithinMs}, when given (above 0), how long the coordinator waits for
     * each rank's stats before counting the rank as not answering (down), so that a client with a
     * short timeout hears of a silent rank instead of timing out on the coordinator; 0 (left out)
     * waits for the send timeout.
     */
    record Stats(long ranksWithinMs) implements CoordinatorRequest {
        public Stats() {
            this(0);
        }

        public Stats {
            if (ranksWithinMs < 0) {
                throw new IllegalArgumentException(RANKS_WITHIN_MS + " must be 0 (the send timeout) or more, got " + ranksWithinMs);
            }
        }

        @Override
        public CoordinatorAction action() {
            return CoordinatorAction.STATS;
        }

        @Override
        public JsonObject toJson() {
            return ranksWithinMs == 0 ? new JsonObject() : new JsonObject().put(RANKS_WITHIN_MS, ranksWithinMs);
        }
    }

    /**
     * {@code alloc}: {@code blocks} blocks for one sequence; {@code near}, when given, a block the
     * sequence holds, whose page the new blocks go to first ({@link #ANYWHERE} when left out).
     */
    record Alloc(int blocks, int near) implements CoordinatorRequest {
        /** No placement asked: best fit. */
        public static final int ANYWHERE = -1;

        public Alloc(int blocks) {
            this(blocks, ANYWHERE);
        }

        @Override
        public CoordinatorAction action() {
            return CoordinatorAction.ALLOC;
        }

        @Override
        public JsonObject toJson() {
            JsonObject json = new JsonObject().put(BLOCKS, blocks);
            return near == ANYWHERE ? json : json.put(NEAR, near);
        }
    }

    /**
     * {@code free}: blocks back, in no particular order; {@code owner}, when given, the coordinator
     * incarnation that handed them out (the {@code owner} of the {@code alloc} reply): another
     * incarnation refuses the free with {@code DISPLACED}. {@code null} for the one serving now.
     */
    record Free(int[] blocks, String owner) implements CoordinatorRequest {
        public Free {
            blocks = blocks.clone();
        }

        /** Blocks back, as the owner serving now handed them out. */
        public Free(int[] blocks) {
            this(blocks, null);
        }

        @Override
        public int[] blocks() {
            return blocks.clone();
        }

        @Override
        public CoordinatorAction action() {
            return CoordinatorAction.FREE;
        }

        @Override
        public JsonObject toJson() {
            JsonObject json = new JsonObject().put(BLOCKS, RequestFields.pageArray(blocks));
            return owner == null ? json : json.put(OWNER, owner);
        }

        @Override
        public boolean equals(Object other) {
            return other instanceof Free f && Arrays.equals(blocks, f.blocks) && java.util.Objects.equals(owner, f.owner);
        }

        @Override
        public int hashCode() {
            return 31 * Arrays.hashCode(blocks) + java.util.Objects.hashCode(owner);
        }

        @Override
        public String toString() {
            return "Free" + Arrays.toString(blocks) + (owner == null ? "" : " of " + owner);
        }
    }

    /** {@code fence}: open a new fence. */
    record Fence() implements CoordinatorRequest {
        @Override
        public CoordinatorAction action() {
            return CoordinatorAction.FENCE;
        }
    }

    /** {@code retired}: the blocks freed under {@code fence} are no longer read. */
    record Retired(long fence) implements CoordinatorRequest {
        @Override
        public CoordinatorAction action() {
            return CoordinatorAction.RETIRED;
        }

        @Override
        public JsonObject toJson() {
            return new JsonObject().put(FENCE, fence);
        }
    }

    /** {@code available}: how many blocks an alloc could take now. */
    record Available() implements CoordinatorRequest {
        @Override
        public CoordinatorAction action() {
            return CoordinatorAction.AVAILABLE;
        }
    }

    /**
     * {@code limit}: a memory limit of {@code bytes} per rank at {@code revision}; a null revision
     * is the next one (the one in force plus one), a change that always applies.
     */
    record Limit(long bytes, Long revision) implements CoordinatorRequest {
        @Override
        public CoordinatorAction action() {
            return CoordinatorAction.LIMIT;
        }

        @Override
        public JsonObject toJson() {
            JsonObject json = new JsonObject().put(BYTES, bytes);
            return revision == null ? json : json.put(REVISION, revision);
        }
    }

    /** {@code trim}: give back the memory of pages that hold no blocks. */
    record Trim() implements CoordinatorRequest {
        @Override
        public CoordinatorAction action() {
            return CoordinatorAction.TRIM;
        }
    }
}
