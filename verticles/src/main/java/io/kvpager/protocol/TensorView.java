package io.kvpager.protocol;

import io.kvpager.Geometry;
import io.kvpager.Layout;
import io.vertx.core.json.JsonObject;

import java.util.ArrayList;
import java.util.List;

/**
 * Where one (layer, buffer) of a group lives in a worker's address space: what an engine's kernel
 * needs to find block {@code b}, at
 * {@code address + (b / blocksPerPage) * pageStride + (b % blocksPerPage) * blockStride}.
 * Addresses are valid in the worker's process only.
 */
public record TensorView(int layer, int buffer, long address, long blockStride, int blockCount, int blocksPerPage,
                         long pageStride) {

    /**
     * One view per (layer, buffer), layer-major, of tensors of {@code geometry} whose virtual
     * ranges start at {@code bases} (one for {@code PAGE_MAJOR}, one per tensor for {@code PER_LAYER}).
     */
    public static List<TensorView> of(Geometry geometry, long[] bases) {
        int layers = geometry.layers();
        int kvBuffers = geometry.kvBuffers();
        long blockBytes = geometry.blockBytes();
        List<TensorView> views = new ArrayList<>(geometry.tensors());
        for (int layer = 0; layer < layers; layer++) {
            for (int buffer = 0; buffer < kvBuffers; buffer++) {
                int tensor = layer * kvBuffers + buffer;
                views.add(geometry.layout() == Layout.PAGE_MAJOR
                        // blocks interleave across tensors inside one compound page
                        ? new TensorView(layer, buffer, bases[0] + tensor * blockBytes, geometry.tensors() * blockBytes,
                                geometry.totalBlocks(), geometry.blocksPerPage(), geometry.bytesPerPageId())
                        : new TensorView(layer, buffer, bases[tensor], blockBytes,
                                geometry.totalBlocks(), geometry.blocksPerPage(), geometry.pageBytes()));
            }
        }
        return views;
    }

    /** The address of block {@code block} of this view. */
    public long blockAddress(int block) {
        if (block < 0 || block >= blockCount) {
            throw new IllegalArgumentException("block " + block + " is outside 0.." + (blockCount - 1));
        }
        return address + (long) (block / blocksPerPage) * pageStride + (long) (block % blocksPerPage) * blockStride;
    }

    public JsonObject toJson() {
        return new JsonObject()
                .put("layer", layer)
                .put("buffer", buffer)
                .put("address", address)
                .put("blockStride", blockStride)
                .put("blockCount", blockCount)
                .put("blocksPerPage", blocksPerPage)
                .put("pageStride", pageStride);
    }

    /** Reads a view from a {@code views} reply. */
    public static TensorView fromJson(JsonObject json) {
        return read(new RequestBody(json));
    }

    /** Reads a view strictly: exactly its seven fields, each an integer in range. */
    public static TensorView read(RequestBody view) {
        view.requireOnly("layer", "buffer", "address", "blockStride", "blockCount", "blocksPerPage", "pageStride");
        return new TensorView(view.requireInt("layer", 0, Integer.MAX_VALUE), view.requireInt("buffer", 0, Integer.MAX_VALUE),
                view.requireLong("address", Long.MIN_VALUE, Long.MAX_VALUE), view.requireLong("blockStride", 1, Long.MAX_VALUE),
                view.requireInt("blockCount", 1, Integer.MAX_VALUE), view.requireInt("blocksPerPage", 1, Integer.MAX_VALUE),
                view.requireLong("pageStride", 1, Long.MAX_VALUE));
    }
}
