package io.kvpager.protocol;

import io.vertx.core.json.JsonObject;

import java.util.Arrays;
import java.util.function.IntUnaryOperator;

import static io.kvpager.protocol.RequestFields.GROUP;
import static io.kvpager.protocol.RequestFields.MAX_REQUEST_ID;
import static io.kvpager.protocol.RequestFields.OWNER;
import static io.kvpager.protocol.RequestFields.PAGES;
import static io.kvpager.protocol.RequestFields.REQUEST_ID;

/**
 * {@code map}, {@code unmap} or {@code release-pages} of page ids of a group: distinct ids, each in
 * the group's range. A repeated {@code requestId} is answered with the first answer.
 */
public record PagesRequest(WorkerAction action, String requestId, int group, Owner owner, int[] pages) {

    public PagesRequest {
        if (action != WorkerAction.MAP && action != WorkerAction.UNMAP && action != WorkerAction.RELEASE_PAGES) {
            throw new IllegalArgumentException("a pages request is a map, unmap or release-pages, not " + action);
        }
        pages = pages.clone();
    }

    @Override
    public int[] pages() {
        return pages.clone();
    }

    public JsonObject toJson() {
        return new JsonObject().put(REQUEST_ID, requestId).put(GROUP, group).put(OWNER, owner.toString())
                .put(PAGES, RequestFields.pageArray(pages));
    }

    /**
     * Reads a request in the order its refusals are given: requestId, group, owner, then the page
     * ids against the group's range, which {@code pagesOfGroup} gives (or refuses, for a group with
     * no tensors).
     */
    public static PagesRequest fromJson(WorkerAction action, JsonObject json, IntUnaryOperator pagesOfGroup) {
        RequestBody body = new RequestBody(json);
        String requestId = body.requireId(REQUEST_ID, MAX_REQUEST_ID);
        int group = body.requireInt(GROUP, 0, Integer.MAX_VALUE);
        Owner owner = body.requireOwner(OWNER);
        int[] pages = body.requirePageIds(PAGES, pagesOfGroup.applyAsInt(group));
        return new PagesRequest(action, requestId, group, owner, pages);
    }

    @Override
    public boolean equals(Object other) {
        return other instanceof PagesRequest r && action == r.action && requestId.equals(r.requestId) && group == r.group
                && owner.equals(r.owner) && Arrays.equals(pages, r.pages);
    }

    @Override
    public int hashCode() {
        return 31 * requestId.hashCode() + Arrays.hashCode(pages);
    }

    @Override
    public String toString() {
        return action.wireName() + " " + Arrays.toString(pages) + " of group " + group + " (" + requestId + ", " + owner + ")";
    }
}
