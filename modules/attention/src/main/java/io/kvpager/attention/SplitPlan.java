package io.kvpager.attention;

/**
 * How one launch splits the sequences (flash-decoding): every sequence is cut into chunks of
 * {@code chunkTokens}, each computed by its own thread block per KV head, so that a few long
 * sequences still fill every multiprocessor; a merge pass combines a sequence's chunks.
 *
 * <p>Two ways to choose the chunk, both cut evenly from the longest sequence, a multiple of
 * {@link #TILE} tokens and no shorter than {@link #MIN_CHUNK} unless the sequence is:
 * {@link #of(DecodeBatch, int, int, int)} (the default) aims at a number of thread blocks per
 * multiprocessor; {@link #waves} costs whole waves of the thread blocks that fit at once (not yet
 * measured on a GPU: the benchmark tries it).
 */
public record SplitPlan(int chunkTokens, int maxSplits) implements LaunchPlan {

    /** Tokens one warp takes at a time. */
    public static final int TILE = 16;
    /** Shortest chunk worth a thread block of its own. */
    public static final int MIN_CHUNK = 256;
    /** Thread blocks per multiprocessor a launch aims at: several waves, so the last is short. */
    public static final int BLOCKS_PER_MULTIPROCESSOR = 16;
    /** What starting and ending a thread block costs, in tokens of its chunk (queries, first copies, merge). */
    public static final int BLOCK_OVERHEAD_TOKENS = 256;

    public SplitPlan {
        if (chunkTokens <= 0 || chunkTokens % TILE != 0) {
            throw new IllegalArgumentException("chunkTokens must be a positive multiple of " + TILE + ", got " + chunkTokens);
        }
        if (maxSplits <= 0) {
            throw new IllegalArgumentException("maxSplits must be at least 1, got " + maxSplits);
        }
    }

    /** The plan for {@code batch} on a GPU of {@code multiprocessors} with {@code kvHeads} KV heads. */
    public static SplitPlan of(DecodeBatch batch, int kvHeads, int multiprocessors) {
        return of(batch, kvHeads, multiprocessors, BLOCKS_PER_MULTIPROCESSOR);
    }

    /** The same, aiming at {@code blocksPerMultiprocessor} thread blocks per multiprocessor. */
    public static SplitPlan of(DecodeBatch batch, int kvHeads, int multiprocessors, int blocksPerMultiprocessor) {
        if (blocksPerMultiprocessor <= 0) {
            throw new IllegalArgumentException("blocksPerMultiprocessor must be at least 1, got " + blocksPerMultiprocessor);
        }
        if (multiprocessors <= 0) {
            throw new IllegalArgumentException("multiprocessors must be at least 1, got " + multiprocessors);
        }
        if (kvHeads <= 0) {
            throw new IllegalArgumentException("kvHeads must be at least 1, got " + kvHeads);
        }
        long target = (long) multiprocessors * blocksPerMultiprocessor;
        long work = batch.tokens() * kvHeads;
        long wanted = Math.max(MIN_CHUNK, (work + target - 1) / target);
        int longest = batch.maxLength();
        long splits = Math.max(1, Math.round((double) longest / wanted));
        long chunk = roundUp((longest + splits - 1) / splits);
        return new SplitPlan((int) chunk, (int) ((longest + chunk - 1) / chunk));
    }

    /**
     * The plan that finishes soonest when {@code resident} thread blocks run at once (the
     * multiprocessors times the kernel's occupancy), {@code kvHeads} thread blocks per (sequence,
     * chunk) (one per KV head; with a warp per KV head, {@link KernelOptions#blocksPerChunk}): every
     * chunk count from one to one per {@link #MIN_CHUNK} tokens of the longest sequence is costed
     * as whole waves of thread blocks, each as long as a chunk plus {@link #BLOCK_OVERHEAD_TOKENS},
     * and the cheapest is taken, fewer chunks on a tie. A last wave that is nearly empty costs a
     * whole wave: a thread block reads only as fast as its own copies in flight allow, so a few left
     * alone run slowly.
     */
    public static SplitPlan waves(DecodeBatch batch, int kvHeads, int resident) {
        if (resident <= 0) {
            throw new IllegalArgumentException("resident must be at least 1, got " + resident);
        }
        if (kvHeads <= 0) {
            throw new IllegalArgumentException("kvHeads must be at least 1, got " + kvHeads);
        }
        int longest = batch.maxLength();
        int most = Math.max(1, longest / MIN_CHUNK);
        SplitPlan best = null;
        long bestCost = Long.MAX_VALUE;
        for (int splits = 1; splits <= most; splits++) {
            long chunk = roundUp((longest + splits - 1L) / splits);
            long blocks = 0;
            for (int i = 0; i < batch.sequences(); i++) {
                blocks += (batch.length(i) + chunk - 1) / chunk;
            }
            blocks *= kvHeads;
            long waves = (blocks + resident - 1) / resident;
            long cost = waves * (chunk + BLOCK_OVERHEAD_TOKENS);
            if (cost < bestCost) {
                bestCost = cost;
                best = new SplitPlan((int) chunk, (int) ((longest + chunk - 1) / chunk));
            }
        }
        return best;
    }

    /**
     * Whether this plan runs {@code batch} whole in one wave of {@code resident} thread blocks,
     * {@code kvHeads} of them per sequence (as {@link #waves}): no sequence cut (so no merge pass)
     * and every sequence's thread blocks resident at once (so no second wave).
     */
    public boolean isOneWhole(DecodeBatch batch, int kvHeads, int resident) {
        return maxSplits == 1 && (long) batch.sequences() * kvHeads <= resident;
    }

    /** Chunks of a sequence of {@code length} tokens. */
    public int splits(int length) {
        return (length + chunkTokens - 1) / chunkTokens;
    }

    /** Bytes of the partial outputs the chunks of split sequences leave for the merge (fp32). */
    @Override
    public long partialBytes(int sequences, AttentionShape shape) {
        return (long) sequences * shape.queryHeads() * maxSplits * shape.headSize() * Float.BYTES;
    }

    /** Bytes of the (max, sum) pairs the chunks leave for the merge. */
    @Override
    public long statsBytes(int sequences, AttentionShape shape) {
        return (long) sequences * shape.queryHeads() * maxSplits * 2 * Float.BYTES;
    }

    private static long roundUp(long tokens) {
        return Math.max(TILE, (tokens + TILE - 1) / TILE * TILE);
    }
}
