package io.kvpager.attention;

/**
 * How one launch spreads a batch over thread blocks, and the scratch it needs for the results of
 * sequences cut between thread blocks: {@link StreamPlan} (the whole-block kernel) or
 * {@link SplitPlan} (the chunked kernel and its merge pass).
 */
public sealed interface LaunchPlan permits SplitPlan, StreamPlan {

    /** Bytes of the partial outputs (fp32) the pieces of cut sequences leave to be merged. */
    long partialBytes(int sequences, AttentionShape shape);

    /** Bytes of the (max, sum) pairs those pieces leave beside them. */
    long statsBytes(int sequences, AttentionShape shape);
}
