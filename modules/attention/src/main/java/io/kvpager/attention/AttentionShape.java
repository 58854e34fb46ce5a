package io.kvpager.attention;

import io.kvpager.Geometry;
import io.kvpager.KvFormat;
import java.util.Objects;

/**
 * The attention shape on one rank: query heads, KV heads, head size, the cache's block size in
 * tokens, the element type of queries and output, and how the blocks store K and V
 * ({@code kv}: {@link KvFormat#BF16}, elements of {@code dtype}, or {@link KvFormat#FP8}, e4m3
 * with a scale per token and KV head). A block of one (layer, buffer) holds
 * {@code blockTokens × kvHeads × headSize} elements, token-major, then for FP8 its
 * {@code kvHeads × blockTokens} fp32 scales, head-major ({@link #blockBytes()}).
 *
 * <p>Checked when made: heads positive, query heads a multiple of KV heads with at most
 * {@value #MAX_GROUP} query heads per KV head, head size 64, 128 or 256; FP8 pages take bf16
 * queries (the kernel widens e4m3 to bf16 for the tensor cores).
 */
public record AttentionShape(int queryHeads, int kvHeads, int headSize, int blockTokens, KvDtype dtype, KvFormat kv) {

    /** Query heads sharing one KV head, at most: one tensor-core tile of rows. */
    public static final int MAX_GROUP = 16;

    public AttentionShape {
        Objects.requireNonNull(dtype, "dtype is required: FP16 or BF16");
        Objects.requireNonNull(kv, "kv is required: BF16 (elements of dtype) or FP8");
        if (kv == KvFormat.FP8 && dtype != KvDtype.BF16) {
            throw new IllegalArgumentException("FP8 KV pages are read with bf16 queries and output, got " + dtype
                    + ": the kernel is built for bf16 only");
        }
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

    /** A shape whose blocks hold elements of {@code dtype} ({@link KvFormat#BF16}). */
    public AttentionShape(int queryHeads, int kvHeads, int headSize, int blockTokens, KvDtype dtype) {
        this(queryHeads, kvHeads, headSize, blockTokens, dtype, KvFormat.BF16);
    }

    /** The same shape with blocks in {@code format}. */
    public AttentionShape withKv(KvFormat format) {
        return new AttentionShape(queryHeads, kvHeads, headSize, blockTokens, dtype, format);
    }

    /** Whether the blocks hold e4m3 elements with scales. */
    public boolean fp8() {
        return kv == KvFormat.FP8;
    }

    /** Query heads per KV head. */
    public int group() {
        return queryHeads / kvHeads;
    }

    /** Bytes of one token's elements of one head in a block: {@code headSize × 2} (FP8: {@code × 1}). */
    public long rowBytes() {
        return (long) headSize * kv.elementBytes();
    }

    /** Bytes of one token's elements, all KV heads (scales not included). */
    public long tokenBytes() {
        return rowBytes() * kvHeads;
    }

    /** Bytes one token takes in one buffer, all KV heads, scales included: what decode reads per token. */
    public long tokenBytesWithScales() {
        return kv.tokenBytes(kvHeads, headSize);
    }

    /** Bytes of the elements of one block (where FP8's scales start). */
    public long blockDataBytes() {
        return tokenBytes() * blockTokens;
    }

    /** Bytes of one block of one (layer, buffer): its elements, then (FP8) its scales. */
    public long blockBytes() {
        return kv.blockBytes(blockTokens, kvHeads, headSize);
    }

    /** Bytes of the queries or of the output of a batch of {@code sequences}: {@code dtype} elements. */
    public long queryBytes(int sequences) {
        return (long) sequences * queryHeads * headSize * dtype.bytes();
    }

    /** Byte offset of (token, KV head, element) inside a block. */
    public long offsetInBlock(int token, int head, int element) {
        return ((long) token * kvHeads + head) * rowBytes() + (long) element * kv.elementBytes();
    }

    /** Byte offset of the fp32 scale of (token, KV head) inside an FP8 block. */
    public long scaleOffsetInBlock(int token, int head) {
        if (!fp8()) {
            throw new IllegalStateException(kv + " blocks have no scales");
        }
        return blockDataBytes() + ((long) head * blockTokens + token) * Float.BYTES;
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
            String scales = fp8() ? " + " + blockTokens + " × " + kvHeads + " scales × 4 bytes" : "";
            throw new IllegalArgumentException("the cache's blocks are " + geometry.blockBytes() + " bytes, but "
                    + blockTokens + " tokens × " + kvHeads + " KV heads × " + headSize + " × " + kv.elementBytes()
                    + " bytes (" + (fp8() ? "FP8 e4m3" : dtype) + ")" + scales + " make " + blockBytes());
        }
        return this;
    }
}
