package io.kvpager.impl;

import io.vertx.core.json.JsonObject;

/**
 * Where one (layer, buffer) of a group lives in a worker's address space: what an engine's kernel
 * needs to find block {@code b}, at
 * {@code address + (b / blocksPerPage) * pageStride + (b % blocksPerPage) * blockStride}.
 * Addresses are valid in the worker's process only.
 */
public record TensorView(int layer, int buffer, long address, long blockStride, int blockCount, int blocksPerPage,
                         long pageStride) {

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
        return new TensorView(json.getInteger("layer"), json.getInteger("buffer"), json.getLong("address"),
                json.getLong("blockStride"), json.getInteger("blockCount"), json.getInteger("blocksPerPage"),
                json.getLong("pageStride"));
    }
}
