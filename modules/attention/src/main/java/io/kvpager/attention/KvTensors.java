package io.kvpager.attention;

import io.kvpager.Geometry;
import io.kvpager.Layout;
import java.util.Arrays;
import java.util.Objects;

/**
 * Where one rank's K and V blocks of one group lie in its address space, computed exactly as the
 * rank worker's {@code views} describe them: the base of each reserved range ({@code 1} for
 * {@link Layout#PAGE_MAJOR}, {@code layers × kvBuffers} for {@link Layout#PER_LAYER}) and the
 * geometry's strides. Block {@code b} of (layer, buffer) starts at
 * {@code view(layer, buffer) + (b / blocksPerPage) × pageStride + (b % blocksPerPage) × blockStride}.
 */
public record KvTensors(Geometry geometry, long[] bases) {

    /** Buffer index of the keys. */
    public static final int KEYS = 0;
    /** Buffer index of the values. */
    public static final int VALUES = 1;

    public KvTensors {
        Objects.requireNonNull(geometry, "geometry");
        Objects.requireNonNull(bases, "bases");
        int expected = geometry.layout() == Layout.PAGE_MAJOR ? 1 : geometry.tensors();
        if (bases.length != expected) {
            throw new IllegalArgumentException(geometry.layout() + " with " + geometry.layers() + " layers × "
                    + geometry.kvBuffers() + " buffers has " + expected + " reserved range(s), got " + bases.length
                    + " base address(es)");
        }
        bases = bases.clone();
    }

    /** The tensors of {@code geometry} at {@code bases}. */
    public static KvTensors of(Geometry geometry, long... bases) {
        return new KvTensors(geometry, bases);
    }

    /** Address of block 0 of (layer, buffer); block {@code b} is {@link #blockAddress}. */
    public long view(int layer, int buffer) {
        if (layer < 0 || layer >= geometry.layers()) {
            throw new IllegalArgumentException("layer " + layer + " is outside 0.." + (geometry.layers() - 1));
        }
        if (buffer < 0 || buffer >= geometry.kvBuffers()) {
            throw new IllegalArgumentException("buffer " + buffer + " is outside 0.." + (geometry.kvBuffers() - 1));
        }
        int tensor = layer * geometry.kvBuffers() + buffer;
        return geometry.layout() == Layout.PAGE_MAJOR ? bases[0] + tensor * geometry.blockBytes() : bases[tensor];
    }

    /** Bytes between consecutive blocks of one page of a view. */
    public long blockStride() {
        return geometry.layout() == Layout.PAGE_MAJOR ? geometry.tensors() * geometry.blockBytes() : geometry.blockBytes();
    }

    /** Bytes between consecutive page ids of a view. */
    public long pageStride() {
        return geometry.handleBytes();
    }

    /** Address of block {@code block} of (layer, buffer). */
    public long blockAddress(int layer, int buffer, int block) {
        if (block < 0 || block >= geometry.totalBlocks()) {
            throw new IllegalArgumentException("block " + block + " is outside the pool's 0.." + (geometry.totalBlocks() - 1));
        }
        int perPage = geometry.blocksPerPage();
        return view(layer, buffer) + (long) (block / perPage) * pageStride() + (long) (block % perPage) * blockStride();
    }

    @Override
    public long[] bases() {
        return bases.clone();
    }

    @Override
    public boolean equals(Object other) {
        return other instanceof KvTensors t && geometry.equals(t.geometry) && Arrays.equals(bases, t.bases);
    }

    @Override
    public int hashCode() {
        return geometry.hashCode() * 31 + Arrays.hashCode(bases);
    }

    @Override
    public String toString() {
        return "KvTensors[" + geometry + ", bases=" + Arrays.stream(bases).mapToObj(Long::toHexString).toList() + "]";
    }
}
