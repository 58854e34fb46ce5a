package io.kvpager.attention;

import io.kvpager.Geometry;
import java.util.Objects;

/**
 * The attention shape on one rank: query heads, KV heads, head size, the cache's block size in
 * tokens and the element type. A block of one (layer, buffer) holds
 * {@code blockTokens × kvHeads × headSize} elements, token-major ({@link #blockBytes()}).
 *
 * <p>Checked when made: heads positive, query heads a multiple of KV heads with at most
 * {@value #MAX_GROUP} query heads per KV head, head size 64, 128 or 256.
 */
public record AttentionShape(int queryHeads, int kvHeads, int headSize, int blockTokens, KvDtype dtype) {

    /** Query heads sharing one KV head, at most: one tensor-core tile of rows. */
    public static final int MAX_GROUP = 16;

    public AttentionShape {
        Objects.requireNonNull(dtype, "dtype is required: FP16 or BF16");
        if (kvHeads <= 0) {
            throw new IllegalArgumentException("kvHeads must be at least 1, got " + kvHeads);
        }
        if (queryHeads <= 0) {
            throw new IllegalArgumentException("queryHeads must be at least 1, got " + queryHeads);
        }
        if (queryHeads % kvHeads != 0) {
            throw new IllegalArgumentException("queryHeads " + queryHeads + " is not a multiple of kvHeads " + kvHeads
                    + ": grouped-query attention shares each KV head between queryHeads / kvHeads query heads");
        }
        if (queryHeads / kvHeads > MAX_GROUP) {
            throw new IllegalArgumentException(queryHeads / kvHeads + " query heads per KV head; at most " + MAX_GROUP
                    + " are supported");
        }
        if (headSize != 64 && headSize != 128 && headSize != 256) {
            throw new IllegalArgumentException("headSize must be 64, 128 or 256, got " + headSize);
        }
        if (blockTokens <= 0) {
            throw new IllegalArgumentException("blockTokens must be at least 1, got " + blockTokens);
        }
    }

    /** Query heads per KV head. */
    public int group() {
        return queryHeads / kvHeads;
    }

    /** Bytes of one token of one head: {@code headSize × 2}. */
    public long rowBytes() {
        return (long) headSize * dtype.bytes();
    }

    /** Bytes of one token, all KV heads. */
    public long tokenBytes() {
        return rowBytes() * kvHeads;
    }

    /** Bytes of one block of one (layer, buffer): {@code blockTokens × kvHeads × headSize × 2}. */
    public long blockBytes() {
        return tokenBytes() * blockTokens;
    }

    /** Bytes of the queries or of the output of a batch of {@code sequences}. */
    public long queryBytes(int sequences) {
        return (long) sequences * queryHeads * rowBytes();
    }

    /** Byte offset of (token, KV head, element) inside a block. */
    public long offsetInBlock(int token, int head, int element) {
        return ((long) token * kvHeads + head) * rowBytes() + (long) element * dtype.bytes();
    }

    /**
     * Checks that a cache of {@code geometry} holds blocks of this shape: K and V buffers
     * ({@code kvBuffers == 2}) and {@code blockBytes} equal to {@link #blockBytes()}.
     *
     * @throws IllegalArgumentException naming what differs
     */
    public AttentionShape requireFits(Geometry geometry) {
        if (geometry.kvBuffers() != 2) {
            throw new IllegalArgumentException("decode attention reads K and V: the cache needs kvBuffers = 2, it has "
                    + geometry.kvBuffers());
        }
        if (geometry.blockBytes() != blockBytes()) {
            throw new IllegalArgumentException("the cache's blocks are " + geometry.blockBytes() + " bytes, but "
                    + blockTokens + " tokens × " + kvHeads + " KV heads × " + headSize + " × " + dtype.bytes()
                    + " bytes (" + dtype + ") make " + blockBytes());
        }
        return this;
    }
}
