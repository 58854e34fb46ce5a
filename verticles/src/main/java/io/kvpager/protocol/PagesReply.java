package io.kvpager.protocol;

import io.vertx.core.json.JsonObject;

import java.util.Arrays;

/**
 * The answer to {@code map} ({@code {"mapped": [ids]}}), {@code unmap} ({@code {"unmapped": [ids]}})
 * or {@code release-pages} ({@code {"released": [ids that held memory], "clean": [every listed id]}}):
 * the page ids the rank confirms.
 *
 * @param pages the ids confirmed: mapped, unmapped, or clean
 * @param released for {@code release-pages}, the ids that held memory on the rank; empty otherwise
 */
public record PagesReply(WorkerAction action, int[] pages, int[] released) {

    public static final String MAPPED = "mapped";
    public static final String UNMAPPED = "unmapped";
    public static final String RELEASED = "released";
    public static final String CLEAN = "clean";

    public PagesReply {
        if (action != WorkerAction.MAP && action != WorkerAction.UNMAP && action != WorkerAction.RELEASE_PAGES) {
            throw new IllegalArgumentException("a pages reply answers a map, unmap or release-pages, not " + action);
        }
        pages = pages.clone();
        released = action == WorkerAction.RELEASE_PAGES ? released.clone() : new int[0];
    }

    public static PagesReply mapped(int[] pages) {
        return new PagesReply(WorkerAction.MAP, pages, null);
    }

    public static PagesReply unmapped(int[] pages) {
        return new PagesReply(WorkerAction.UNMAP, pages, null);
    }

    public static PagesReply released(int[] released, int[] clean) {
        return new PagesReply(WorkerAction.RELEASE_PAGES, clean, released);
    }

    @Override
    public int[] pages() {
        return pages.clone();
    }

    @Override
    public int[] released() {
        return released.clone();
    }

    public JsonObject toJson() {
        return switch (action) {
            case MAP -> new JsonObject().put(MAPPED, RequestFields.pageArray(pages));
            case UNMAP -> new JsonObject().put(UNMAPPED, RequestFields.pageArray(pages));
            default -> new JsonObject().put(RELEASED, RequestFields.pageArray(released)).put(CLEAN, RequestFields.pageArray(pages));
        };
    }

    /** Reads the answer to {@code action}: exactly its fields, each an array of page ids, and the lease it may state ({@link WorkerProtocol#LEASE_MS}). */
    public static PagesReply fromJson(WorkerAction action, JsonObject json) {
        RequestBody body = new RequestBody(json);
        return switch (action) {
            case MAP -> {
                body.requireOnly(MAPPED, WorkerProtocol.LEASE_MS);
                yield mapped(body.requireInts(MAPPED, 0, Integer.MAX_VALUE));
            }
            case UNMAP -> {
                body.requireOnly(UNMAPPED, WorkerProtocol.LEASE_MS);
                yield unmapped(body.requireInts(UNMAPPED, 0, Integer.MAX_VALUE));
            }
            case RELEASE_PAGES -> {
                body.requireOnly(RELEASED, CLEAN, WorkerProtocol.LEASE_MS);
                yield released(body.requireInts(RELEASED, 0, Integer.MAX_VALUE), body.requireInts(CLEAN, 0, Integer.MAX_VALUE));
            }
            default -> throw new IllegalArgumentException("a pages reply answers a map, unmap or release-pages, not " + action);
        };
    }

    /** Whether this reply confirms exactly {@code batch}: each of its pages once, in any order. */
    public boolean confirms(int[] batch) {
        if (pages.length != batch.length) {
            return false;
        }
        java.util.BitSet expected = new java.util.BitSet();
        for (int page : batch) {
            expected.set(page);
        }
        if (expected.cardinality() != batch.length) {
            return false;
        }
        for (int page : pages) {
            if (!expected.get(page)) {
                return false;
            }
            expected.clear(page);
        }
        return true;
    }

    @Override
    public boolean equals(Object other) {
        return other instanceof PagesReply r && action == r.action && Arrays.equals(pages, r.pages) && Arrays.equals(released, r.released);
    }

    @Override
    public int hashCode() {
        return 31 * action.hashCode() + Arrays.hashCode(pages);
    }

    @Override
    public String toString() {
        return toJson().encode();
    }
}
