package io.kvpager.attention;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.Arrays;
import org.junit.jupiter.api.Test;

class SplitPlanTest {

    private static DecodeBatch uniform(int sequences, int length) {
        int[][] tables = new int[sequences][(length + 15) / 16];
        int[] lengths = new int[sequences];
        Arrays.fill(lengths, length);
        return DecodeBatch.of(tables, lengths);
    }

    @Test
    void longSequencesAreCutEvenlyAndShortOnesAreNot() {
        // 132 multiprocessors, 8 KV heads: the H200 benchmark's shapes.
        assertThat(SplitPlan.of(uniform(64, 4096), 8, 132)).isEqualTo(new SplitPlan(1024, 4));
        assertThat(SplitPlan.of(uniform(256, 1024), 8, 132)).isEqualTo(new SplitPlan(1024, 1));
        assertThat(SplitPlan.of(uniform(16, 16384), 8, 132)).isEqualTo(new SplitPlan(1024, 16));
        assertThat(SplitPlan.of(uniform(1, 100), 8, 132)).isEqualTo(new SplitPlan(112, 1));
        assertThat(SplitPlan.of(uniform(1, 1), 1, 132)).isEqualTo(new SplitPlan(16, 1));
    }

    @Test
    void wavesAvoidANearlyEmptyLastWave() {
        // 132 multiprocessors x 3 resident thread blocks: 4 chunks of the 512 (sequence, head)
        // pairs would be 5.2 waves, 3 chunks are 3.9.
        assertThat(SplitPlan.waves(uniform(64, 4096), 8, 396)).isEqualTo(new SplitPlan(1376, 3));
        // 2048 pairs are 5.2 waves unsplit; halving the chunks costs more than the last wave saves.
        assertThat(SplitPlan.waves(uniform(256, 1024), 8, 396)).isEqualTo(new SplitPlan(1024, 1));
        // 128 pairs in 3 chunks are 384 thread blocks: one wave.
        assertThat(SplitPlan.waves(uniform(16, 16384), 8, 396)).isEqualTo(new SplitPlan(5472, 3));
        assertThat(SplitPlan.waves(uniform(1, 100), 8, 396)).isEqualTo(new SplitPlan(112, 1));
        DecodeBatch mixed = DecodeBatch.of(new int[][] {new int[200], new int[2]}, new int[] {3199, 17});
        SplitPlan plan = SplitPlan.waves(mixed, 2, 396);
        assertThat(plan.maxSplits()).as("few thread blocks: one wave whatever the split, so the most chunks").isEqualTo(12);
        assertThatThrownBy(() -> SplitPlan.waves(mixed, 2, 0)).hasMessageContaining("resident");
    }

    @Test
    void everyTokenFallsInExactlyOneChunk() {
        DecodeBatch batch = DecodeBatch.of(new int[][] {new int[200], new int[2]}, new int[] {3199, 17});
        SplitPlan plan = SplitPlan.of(batch, 2, 132);
        assertThat(plan.chunkTokens() % SplitPlan.TILE).isZero();
        assertThat(plan.splits(3199)).isEqualTo(plan.maxSplits());
        assertThat((long) plan.chunkTokens() * plan.maxSplits()).isGreaterThanOrEqualTo(3199);
        assertThat((long) plan.chunkTokens() * (plan.maxSplits() - 1)).isLessThan(3199);
        assertThat(plan.splits(17)).isEqualTo(1);
    }

    @Test
    void scratchIsSizedForEveryChunkOfEveryQueryHead() {
        AttentionShape shape = new AttentionShape(32, 8, 128, 16, KvDtype.BF16);
        SplitPlan plan = new SplitPlan(1024, 4);
        assertThat(plan.partialBytes(64, shape)).isEqualTo(64L * 32 * 4 * 128 * 4);
        assertThat(plan.statsBytes(64, shape)).isEqualTo(64L * 32 * 4 * 8);
    }

    @Test
    void badPlansAreRefused() {
        assertThatThrownBy(() -> new SplitPlan(100, 1)).hasMessageContaining("multiple of 16, got 100");
        assertThatThrownBy(() -> new SplitPlan(16, 0)).hasMessageContaining("maxSplits must be at least 1");
        assertThatThrownBy(() -> SplitPlan.of(uniform(1, 1), 8, 0)).hasMessageContaining("multiprocessors");
        assertThatThrownBy(() -> SplitPlan.of(uniform(1, 1), 8, 132, 0)).hasMessageContaining("blocksPerMultiprocessor");
    }
}
