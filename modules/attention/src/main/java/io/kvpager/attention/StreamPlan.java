package io.kvpager.attention;

/**
 * The whole-block kernel's plan (stream-K): every sequence's 16-token tiles (every KV head of 16
 * tokens), sequences in order, form one list of {@code tiles}, cut into {@code ctas} contiguous
 * ranges that differ by at most one tile, one per thread block. All thread blocks run at once,
 * read the same number of bytes and finish together: no tail, and no second launch, since the
 * thread block that finishes a cut sequence's last piece merges its pieces. Each thread block
 * leaves at most two cut pieces (its range's first and last), so the scratch is two slots of
 * every query head per thread block.
 */
public record StreamPlan(int ctas, long tiles) implements LaunchPlan {

    public StreamPlan {
        if (tiles <= 0) {
            throw new IllegalArgumentException("tiles must be at least 1, got " + tiles);
        }
        if (ctas <= 0 || ctas > tiles) {
            throw new IllegalArgumentException("ctas must be 1.." + tiles + " (one tile each at least), got " + ctas);
        }
    }

    /**
     * The plan for {@code batch} when {@code resident} thread blocks run at once: that many thread
     * blocks, or one per tile when there are fewer tiles.
     *
     * @throws IllegalArgumentException when the tiles do not fit the kernel's 32-bit tile offsets
     */
    public static StreamPlan of(DecodeBatch batch, int resident) {
        if (resident <= 0) {
            throw new IllegalArgumentException("resident must be at least 1, got " + resident);
        }
        long tiles = tileStarts(batch)[batch.sequences()];
        return new StreamPlan((int) Math.min(resident, tiles), tiles);
    }

    /**
     * Per sequence, where its tiles start in the list of every sequence's tiles, and the total
     * last: {@code sequences + 1} entries, what the kernels read as {@code tileStart}.
     */
    public static int[] tileStarts(DecodeBatch batch) {
        int[] starts = new int[batch.sequences() + 1];
        long sum = 0;
        for (int i = 0; i < batch.sequences(); i++) {
            starts[i] = (int) sum;
            sum += (batch.length(i) + SplitPlan.TILE - 1) / SplitPlan.TILE;
            if (sum > Integer.MAX_VALUE) {
                throw new IllegalArgumentException("the batch's " + sum + "+ tiles of 16 tokens exceed "
                        + Integer.MAX_VALUE);
            }
        }
        starts[batch.sequences()] = (int) sum;
        return starts;
    }

    @Override
    public long partialBytes(int sequences, AttentionShape shape) {
        return 2L * ctas * shape.queryHeads() * shape.headSize() * Float.BYTES;
    }

    @Override
    public long statsBytes(int sequences, AttentionShape shape) {
        return 2L * ctas * shape.queryHeads() * 2 * Float.BYTES;
    }
}
