package io.kvpager.protocol;

import io.kvpager.Geometry;
import io.kvpager.Layout;
import io.kvpager.device.HandlePoolOptions;
import io.vertx.core.json.JsonObject;

import static io.kvpager.protocol.RequestFields.GROUP;
import static io.kvpager.protocol.RequestFields.OWNER;

/**
 * {@code create-tensors}: reserve a group's virtual ranges for {@code owner}, with this geometry.
 *
 * @param handlePool the group's idle-handle bounds; null for the defaults of its geometry
 */
public record CreateTensorsRequest(int group, Owner owner, Geometry geometry, boolean zeroPage, HandlePoolOptions handlePool) {

    public static final String LAYERS = "layers";
    public static final String KV_BUFFERS = "kvBuffers";
    public static final String BLOCK_BYTES = "blockBytes";
    public static final String PAGE_BYTES = "pageBytes";
    public static final String PAGES = "pages";
    public static final String LAYOUT = "layout";
    public static final String ZERO_PAGE = "zeroPage";
    public static final String HANDLE_POOL = "handlePool";

    public JsonObject toJson() {
        JsonObject json = new JsonObject().put(GROUP, group).put(OWNER, owner.toString())
                .put(LAYERS, geometry.layers()).put(KV_BUFFERS, geometry.kvBuffers())
                .put(BLOCK_BYTES, geometry.blockBytes()).put(PAGE_BYTES, geometry.pageBytes())
                .put(PAGES, geometry.pages()).put(LAYOUT, geometry.layout().name()).put(ZERO_PAGE, zeroPage);
        return handlePool == null ? json : json.put(HANDLE_POOL, HandlePoolJson.toJson(handlePool));
    }

    /** The handle-pool bounds the group gets: the ones asked for, or its geometry's defaults. */
    public HandlePoolOptions handlePoolOrDefaults() {
        return handlePool == null ? HandlePoolOptions.defaults(geometry) : handlePool;
    }

    public static CreateTensorsRequest fromJson(JsonObject json) {
        RequestBody body = new RequestBody(json);
        int group = body.requireInt(GROUP, 0, Integer.MAX_VALUE);
        Owner owner = body.requireOwner(OWNER);
        Geometry geometry = new Geometry(
                body.requireInt(LAYERS, 1, Integer.MAX_VALUE),
                body.requireInt(KV_BUFFERS, 1, Integer.MAX_VALUE),
                body.requireLong(BLOCK_BYTES, 1, Long.MAX_VALUE),
                body.requireLong(PAGE_BYTES, 1, Long.MAX_VALUE),
                body.requireInt(PAGES, 1, Integer.MAX_VALUE),
                body.requireEnum(LAYOUT, Layout.class));
        boolean zeroPage = body.optionalBoolean(ZERO_PAGE, false);
        HandlePoolOptions handlePool = json.getValue(HANDLE_POOL) == null ? null : HandlePoolJson.read(body, geometry);
        return new CreateTensorsRequest(group, owner, geometry, zeroPage, handlePool);
    }
}
