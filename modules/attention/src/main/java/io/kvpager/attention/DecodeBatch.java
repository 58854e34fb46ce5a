package io.kvpager.attention;

import io.kvpager.Geometry;
import java.util.Objects;

/**
 * One decode step's sequences: each one's block table (the block ids kvpager handed out, in token
 * order; several sequences may name the same block, as with a shared prefix) and its length in
 * tokens, the new token included. Flattened for the device: {@link #blocks()} holds every table
 * one after the other, sequence {@code i}'s starting at {@link #tableStart()}{@code [i]}.
 *
 * <p>{@link #check} proves a batch fits a cache before anything is launched.
 */
public final class DecodeBatch {

    /** The most sequences one launch takes (a grid dimension). */
    public static final int MAX_SEQUENCES = 65_535;

    private final int[] blocks;
    private final int[] tableStart;
    private final int[] lengths;
    private final long tokens;
    private final int maxLength;

    private DecodeBatch(int[] blocks, int[] tableStart, int[] lengths) {
        this.blocks = blocks;
        this.tableStart = tableStart;
        this.lengths = lengths;
        long sum = 0;
        int max = 0;
        for (int length : lengths) {
            sum += length;
            max = Math.max(max, length);
        }
        this.tokens = sum;
        this.maxLength = max;
    }

    /**
     * A batch of {@code tables.length} sequences; the arrays are copied.
     *
     * @throws IllegalArgumentException when the counts differ, there is no sequence or more than
     *     {@value #MAX_SEQUENCES}, or a length is below 1
     */
    public static DecodeBatch of(int[][] tables, int[] lengths) {
        Objects.requireNonNull(tables, "tables");
        Objects.requireNonNull(lengths, "lengths");
        if (tables.length != lengths.length) {
            throw new IllegalArgumentException(tables.length + " block tables but " + lengths.length + " lengths");
        }
        if (tables.length == 0 || tables.length > MAX_SEQUENCES) {
            throw new IllegalArgumentException("a batch holds 1.." + MAX_SEQUENCES + " sequences, got " + tables.length);
        }
        int[] start = new int[tables.length + 1];
        for (int i = 0; i < tables.length; i++) {
            if (tables[i] == null) {
                throw new IllegalArgumentException("sequence " + i + " has no block table");
            }
            if (lengths[i] < 1) {
                throw new IllegalArgumentException("sequence " + i + " has length " + lengths[i]
                        + ": a decode step attends to at least its new token");
            }
            start[i + 1] = Math.addExact(start[i], tables[i].length);
        }
        int[] flat = new int[start[tables.length]];
        for (int i = 0; i < tables.length; i++) {
            System.arraycopy(tables[i], 0, flat, start[i], tables[i].length);
        }
        return new DecodeBatch(flat, start, lengths.clone());
    }

    /**
     * Checks every sequence against the cache: its length within its table
     * ({@code length ≤ table length × blockTokens}), every block id inside the pool and held by
     * the group.
     *
     * @throws IllegalArgumentException naming the first sequence and block that do not fit
     */
    public DecodeBatch check(AttentionShape shape, Geometry geometry, GroupBlocks held) {
        shape.requireFits(geometry);
        if (held.totalBlocks() != geometry.totalBlocks()) {
            throw new IllegalArgumentException("the held blocks are for a pool of " + held.totalBlocks()
                    + " blocks, the cache has " + geometry.totalBlocks());
        }
        for (int i = 0; i < lengths.length; i++) {
            int entries = tableStart[i + 1] - tableStart[i];
            long capacity = (long) entries * shape.blockTokens();
            if (lengths[i] > capacity) {
                throw new IllegalArgumentException("sequence " + i + " has length " + lengths[i] + " but its table of "
                        + entries + " block(s) holds " + capacity + " tokens of " + shape.blockTokens() + " per block");
            }
            for (int k = tableStart[i]; k < tableStart[i + 1]; k++) {
                int block = blocks[k];
                if (block < 0 || block >= geometry.totalBlocks()) {
                    throw new IllegalArgumentException("sequence " + i + ", table entry " + (k - tableStart[i]) + ": block "
                            + block + " is outside the pool's 0.." + (geometry.totalBlocks() - 1));
                }
                if (!held.holds(block)) {
                    throw new IllegalArgumentException("sequence " + i + ", table entry " + (k - tableStart[i]) + ": block "
                            + block + " is not allocated to this group");
                }
            }
        }
        return this;
    }

    public int sequences() {
        return lengths.length;
    }

    public int length(int sequence) {
        return lengths[sequence];
    }

    /** Block id of sequence {@code sequence}'s token {@code token}. */
    public int blockOf(int sequence, int token, int blockTokens) {
        return blocks[tableStart[sequence] + token / blockTokens];
    }

    /** All tables, one after the other; a copy. */
    public int[] blocks() {
        return blocks.clone();
    }

    /** Where each sequence's table starts in {@link #blocks()}, and the total at the end; a copy. */
    public int[] tableStart() {
        return tableStart.clone();
    }

    /** Every sequence's length; a copy. */
    public int[] lengths() {
        return lengths.clone();
    }

    /** Tokens over all sequences. */
    public long tokens() {
        return tokens;
    }

    public int maxLength() {
        return maxLength;
    }

    /** K and V bytes one layer's attention reads for this batch. */
    public long kvBytes(AttentionShape shape) {
        return tokens * shape.tokenBytesWithScales() * 2;
    }

    int tableEntries() {
        return blocks.length;
    }
}
