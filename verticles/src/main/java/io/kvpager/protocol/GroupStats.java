package io.kvpager.protocol;

import io.kvpager.Layout;
import io.vertx.core.json.JsonObject;

import java.util.Arrays;

/**
 * One group in a {@code stats} answer: its mapped pages and handles, geometry, handle-pool bounds,
 * the idle handles its coordinator asked the rank to keep besides ({@code keep-handles}, in page
 * ids), the pages a failed request left partly mapped, the handles whose release failed, and its owner.
 *
 * @param owner the owner's string form, {@code "null"} for none
 */
public record GroupStats(int mappedPages, int handles, Layout layout, int pages, boolean zeroPage, int prefillPages,
                         int boundPages, int idlePages, int[] partlyMappedPages, int unreleasedHandles, String owner) {

    public static final String MAPPED_PAGES = "mappedPages";
    public static final String HANDLES = "handles";
    public static final String LAYOUT = "layout";
    public static final String PAGES = "pages";
    public static final String ZERO_PAGE = "zeroPage";
    public static final String HANDLE_POOL = "handlePool";
    public static final String PREFILL_PAGES = "prefillPages";
    public static final String BOUND_PAGES = "boundPages";
    public static final String IDLE_PAGES = KeepHandlesRequest.IDLE_PAGES;
    public static final String PARTLY_MAPPED_PAGES = "partlyMappedPages";
    public static final String UNRELEASED_HANDLES = "unreleasedHandles";
    public static final String OWNER = "owner";

    public GroupStats {
        partlyMappedPages = partlyMappedPages.clone();
    }

    @Override
    public int[] partlyMappedPages() {
        return partlyMappedPages.clone();
    }

    public JsonObject toJson() {
        return new JsonObject().put(MAPPED_PAGES, mappedPages).put(HANDLES, handles).put(LAYOUT, layout.name())
                .put(PAGES, pages).put(ZERO_PAGE, zeroPage)
                .put(HANDLE_POOL, new JsonObject().put(PREFILL_PAGES, prefillPages).put(BOUND_PAGES, boundPages)
                        .put(IDLE_PAGES, idlePages))
                .put(PARTLY_MAPPED_PAGES, RequestFields.pageArray(partlyMappedPages)).put(UNRELEASED_HANDLES, unreleasedHandles)
                .put(OWNER, owner);
    }

    public static GroupStats fromJson(JsonObject json) {
        return read(new RequestBody(json));
    }

    static GroupStats read(RequestBody body) {
        body.requireOnly(MAPPED_PAGES, HANDLES, LAYOUT, PAGES, ZERO_PAGE, HANDLE_POOL, PARTLY_MAPPED_PAGES, UNRELEASED_HANDLES, OWNER);
        RequestBody pool = body.requireObject(HANDLE_POOL);
        pool.requireOnly(PREFILL_PAGES, BOUND_PAGES, IDLE_PAGES);
        return new GroupStats(body.requireInt(MAPPED_PAGES, 0, Integer.MAX_VALUE), body.requireInt(HANDLES, 0, Integer.MAX_VALUE),
                body.requireEnum(LAYOUT, Layout.class), body.requireInt(PAGES, 1, Integer.MAX_VALUE),
                body.requireBoolean(ZERO_PAGE), pool.requireInt(PREFILL_PAGES, 0, Integer.MAX_VALUE),
                pool.requireInt(BOUND_PAGES, 0, Integer.MAX_VALUE), pool.requireInt(IDLE_PAGES, 0, Integer.MAX_VALUE),
                body.requireInts(PARTLY_MAPPED_PAGES, 0, Integer.MAX_VALUE),
                body.requireInt(UNRELEASED_HANDLES, 0, Integer.MAX_VALUE), body.requireString(OWNER));
    }

    @Override
    public boolean equals(Object other) {
        return other instanceof GroupStats g && toJson().equals(g.toJson());
    }

    @Override
    public int hashCode() {
        return toJson().hashCode();
    }

    @Override
    public String toString() {
        return toJson().encode();
    }
}
