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
    void aBatchThatRunsWholeInOneWaveNeedsNoMergeAndNoSecondWave() {
        // B 64 x 4096 over 8 KV heads: 512 thread blocks. 3 resident per multiprocessor (the default's
        // 4 warps at head size 128) is 396: it must cut; 4 resident (3 warps) is 528: one wave, whole.
        DecodeBatch b64 = uniform(64, 4096);
        assertThat(SplitPlan.waves(b64, 8, 396).isOneWhole(b64, 8, 396)).isFalse();
        SplitPlan fourPerMultiprocessor = SplitPlan.waves(b64, 8, 528);
        assertThat(fourPerMultiprocessor).isEqualTo(new SplitPlan(4096, 1));
        assertThat(fourPerMultiprocessor.isOneWhole(b64, 8, 528)).isTrue();
        // whole, but in four waves: a second wave is not one wave
        DecodeBatch b256 = uniform(256, 1024);
        assertThat(SplitPlan.waves(b256, 8, 528).isOneWhole(b256, 8, 528)).isFalse();
        // one wave, but cut: B 16 x 16384 needs chunks to fill the GPU
        DecodeBatch b16 = uniform(16, 16384);
        assertThat(SplitPlan.waves(b16, 8, 528).isOneWhole(b16, 8, 528)).isFalse();
        assertThat(new SplitPlan(4096, 1).isOneWhole(b64, 8, 511)).as("one thread block too many").isFalse();
    }

    @Test
    void aWarpPerHeadRunsManyShortSequencesAndSixteenWarpsFewLongOnesWholeInOneWave() {
        // FP8 pages on the H200, 8 KV heads: 4 warps of 2 stages fit 4 to a multiprocessor (528), and so
        // do 4 warps with a warp per KV head (2 thread blocks per sequence); 16 warps fit one (132)
        DecodeBatch b256 = uniform(256, 1024);
        assertThat(SplitPlan.waves(b256, 8, 528)).as("4 waves of thread blocks").isEqualTo(new SplitPlan(1024, 1));
        assertThat(SplitPlan.waves(b256, 8, 528).isOneWhole(b256, 8, 528)).isFalse();
        assertThat(SplitPlan.waves(b256, 2, 528).isOneWhole(b256, 2, 528)).as("512 thread blocks of 4 heads").isTrue();
        DecodeBatch b16 = uniform(16, 16384);
        assertThat(SplitPlan.waves(b16, 2, 528).isOneWhole(b16, 2, 528)).as("32 thread blocks would leave most idle")
                .isFalse();
        assertThat(SplitPlan.waves(b16, 8, 132)).isEqualTo(new SplitPlan(16384, 1));
        assertThat(SplitPlan.waves(b16, 8, 132).isOneWhole(b16, 8, 132)).isTrue();
        DecodeBatch b64 = uniform(64, 4096);
        assertThat(SplitPlan.waves(b64, 8, 132).isOneWhole(b64, 8, 132)).as("512 pairs over 132 thread blocks").isFalse();
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
