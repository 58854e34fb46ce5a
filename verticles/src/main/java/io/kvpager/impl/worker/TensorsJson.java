package io.kvpager.impl.worker;

import io.kvpager.Geometry;
import io.kvpager.device.GroupTensors;
import io.kvpager.device.HandlePoolOptions;
import io.kvpager.device.RankHandlePool;
import io.kvpager.impl.protocol.RequestBody;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;

/**
 * The JSON forms of the device side ({@link io.kvpager.device}) in the worker's actions: the
 * {@code handlePool} option of {@code create-tensors}, and a group's line and the handle pools'
 * lines in the {@code stats} reply.
 */
final class TensorsJson {

    private TensorsJson() {
    }

    /**
     * Reads the {@code handlePool} field of a {@code create-tensors} body; defaults where it or a
     * field is missing.
     *
     * @throws IllegalArgumentException (a 400) for an unknown field, a value that is not an
     *     integer, a bound above the group's pages, a prefill above the bound, or more idle
     *     handles than a rank can count
     */
    static HandlePoolOptions handlePool(RequestBody body, Geometry geometry) {
        RequestBody options = body.optionalObject("handlePool");
        if (options == null) {
            return HandlePoolOptions.defaults(geometry);
        }
        options.requireOnly("prefillPages", "boundPages");
        int bound = options.optionalInt("boundPages", 0, geometry.pages(), HandlePoolOptions.defaultBoundPages(geometry));
        int prefill = options.optionalInt("prefillPages", 0, geometry.pages(), 0);
        if (prefill > bound) {
            throw new IllegalArgumentException("handlePool.prefillPages " + prefill + " is above handlePool.boundPages "
                    + bound + "; prefilled handles are idle ones, so the bound must hold them");
        }
        HandlePoolOptions read = new HandlePoolOptions(prefill, bound);
        read.requireFits(geometry);
        return read;
    }

    static JsonObject toJson(HandlePoolOptions options) {
        return new JsonObject().put("prefillPages", options.prefillPages()).put("boundPages", options.boundPages());
    }

    /** A group's line in the {@code stats} reply. */
    static JsonObject stats(GroupTensors tensors) {
        JsonArray partlyMapped = new JsonArray();
        for (int page : tensors.partlyMappedPages()) {
            partlyMapped.add(page);
        }
        Geometry geometry = tensors.geometry();
        return new JsonObject()
                .put("mappedPages", tensors.mappedPages())
                .put("handles", tensors.handles())
                .put("layout", geometry.layout().name())
                .put("pages", geometry.pages())
                .put("zeroPage", tensors.zeroPage())
                .put("handlePool", toJson(tensors.poolOptions()))
                .put("partlyMappedPages", partlyMapped)
                .put("unreleasedHandles", tensors.unreleasedHandles());
    }

    /** One line per handle size, for the {@code stats} reply. */
    static JsonArray stats(RankHandlePool handles) {
        JsonArray sizes = new JsonArray();
        for (RankHandlePool.SizeStats size : handles.sizes()) {
            sizes.add(new JsonObject()
                    .put("handleBytes", size.handleBytes())
                    .put("idle", size.idle())
                    .put("bound", size.bound())
                    .put("lent", size.lent())
                    .put("creates", size.creates())
                    .put("reuses", size.reuses())
                    .put("releases", size.releases()));
        }
        return sizes;
    }
}
