package io.kvpager.attention;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;

class StreamPlanTest {

    private static final DecodeBatch MIXED =
            DecodeBatch.of(new int[][] {new int[200], new int[2], new int[1]}, new int[] {3199, 17, 16});

    @Test
    void tileStartsCountSixteenTokenTilesOfEverySequence() {
        assertThat(StreamPlan.tileStarts(MIXED)).containsExactly(0, 200, 202, 203);
    }

    @Test
    void oneThreadBlockPerResidentSlotButNeverMoreThanTiles() {
        assertThat(StreamPlan.of(MIXED, 132)).isEqualTo(new StreamPlan(132, 203));
        assertThat(StreamPlan.of(MIXED, 1000)).isEqualTo(new StreamPlan(203, 203));
        DecodeBatch one = DecodeBatch.of(new int[][] {new int[1]}, new int[] {1});
        assertThat(StreamPlan.of(one, 132)).isEqualTo(new StreamPlan(1, 1));
    }

    @Test
    void scratchIsTwoSlotsOfEveryQueryHeadPerThreadBlock() {
        AttentionShape shape = new AttentionShape(32, 8, 128, 16, KvDtype.BF16);
        StreamPlan plan = new StreamPlan(132, 16384);
        assertThat(plan.partialBytes(64, shape)).isEqualTo(2L * 132 * 32 * 128 * 4);
        assertThat(plan.statsBytes(64, shape)).isEqualTo(2L * 132 * 32 * 8);
    }

    @Test
    void badPlansAreRefused() {
        assertThatThrownBy(() -> new StreamPlan(5, 4)).hasMessageContaining("ctas must be 1..4");
        assertThatThrownBy(() -> new StreamPlan(0, 4)).hasMessageContaining("ctas must be 1..4");
        assertThatThrownBy(() -> new StreamPlan(1, 0)).hasMessageContaining("tiles must be at least 1");
        assertThatThrownBy(() -> StreamPlan.of(MIXED, 0)).hasMessageContaining("resident");
    }
}
