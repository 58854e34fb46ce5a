package io.kvpager.impl.worker;

import io.kvpager.Geometry;
import io.kvpager.device.GroupTensors;
import io.kvpager.device.RankHandlePool;
import io.kvpager.protocol.GroupStats;
import io.kvpager.protocol.HandlePoolJson;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;

/**
 * The JSON forms of the device side ({@link io.kvpager.device}) in the worker's {@code stats}
 * reply: a group's line and the handle pools' lines.
 */
final class TensorsJson {

    private TensorsJson() {
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
                .put("handlePool", HandlePoolJson.toJson(tensors.poolOptions()).put(GroupStats.IDLE_PAGES, tensors.idlePages()))
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
