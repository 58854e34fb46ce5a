package io.kvpager.cli.demo;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import org.junit.jupiter.api.Test;

/** The modelled attention time against the H200's measured steps (docs/sharing.md). */
class SimAttentionTest {

    private static long tokens(ModelProfile model, double mibPerStep) {
        return Math.round(mibPerStep * (1 << 20) / model.bytesPerToken(2));
    }

    @Test
    void modelledStepsAreWithinTenPercentOfTheH200sForTheBandwidthBoundModels() {
        // KV MiB per step and ms per step measured by `kvpager demo --device cuda --duration 20s` on the H200
        assertThat(SimAttention.stepNanos(ModelProfile.SEVEN_B, 2, tokens(ModelProfile.SEVEN_B, 51515.3), SimAttention.H200_BANDWIDTH_BYTES_PER_S) / 1e6)
                .isCloseTo(13.375, within(13.375 * 0.10));
        assertThat(SimAttention.stepNanos(ModelProfile.THIRTEEN_B, 2, tokens(ModelProfile.THIRTEEN_B, 45585.4), SimAttention.H200_BANDWIDTH_BYTES_PER_S) / 1e6)
                .isCloseTo(12.480, within(12.480 * 0.10));
        assertThat(SimAttention.stepNanos(ModelProfile.SEVENTY_B, 2, tokens(ModelProfile.SEVENTY_B, 18338.3), SimAttention.H200_BANDWIDTH_BYTES_PER_S) / 1e6)
                .isCloseTo(7.431, within(7.431 * 0.10));
    }

    @Test
    void atAnH100sBandwidthTheModelledStepsAreWithinTwentyPercentOfTheH100s() {
        // KV MiB per step and ms per step measured by `kvpager demo --compare --device cuda --weights none` on an H100
        // (overlapping, seed 42, run 1, first policy): 2.74, 2.25 and 1.67 TB/s; modelled at 2.7 TB/s and the same launches
        assertThat(SimAttention.stepNanos(ModelProfile.SEVEN_B, 2, tokens(ModelProfile.SEVEN_B, 21630.3), 2.7e12) / 1e6)
                .isCloseTo(8.281, within(8.281 * 0.20));
        assertThat(SimAttention.stepNanos(ModelProfile.THIRTEEN_B, 2, tokens(ModelProfile.THIRTEEN_B, 18257.4), 2.7e12) / 1e6)
                .isCloseTo(8.495, within(8.495 * 0.20));
        assertThat(SimAttention.stepNanos(ModelProfile.SEVENTY_B, 2, tokens(ModelProfile.SEVENTY_B, 16755.8), 2.7e12) / 1e6)
                .isCloseTo(10.543, within(10.543 * 0.20));
    }

    @Test
    void aStepWithNothingDecodingLaunchesNoAttentionButOneTokenPaysEveryLaunch() {
        assertThat(SimAttention.stepNanos(ModelProfile.SEVENTY_B, 2, 0, SimAttention.H200_BANDWIDTH_BYTES_PER_S)).isZero();
        assertThat(SimAttention.stepNanos(ModelProfile.SEVENTY_B, 2, 1, SimAttention.H200_BANDWIDTH_BYTES_PER_S)).isGreaterThanOrEqualTo(80 * 2 * 20_000L);
    }

    @Test
    void theWeightsAreReadAtTheMeasuredBandwidthAndNotAtAllWithoutThem() {
        // 70.554 GB of FP8 weights at 4.55 TB/s
        assertThat(SimAttention.weightNanos(ModelProfile.SEVENTY_B, WeightFormat.FP8)).isBetween(15_500_000L, 15_520_000L);
        assertThat(SimAttention.weightNanos(ModelProfile.SEVENTY_B, WeightFormat.BF16))
                .isCloseTo(2 * SimAttention.weightNanos(ModelProfile.SEVENTY_B, WeightFormat.FP8), org.assertj.core.data.Offset.offset(1L));
        assertThat(SimAttention.weightNanos(ModelProfile.SEVENTY_B, WeightFormat.NONE)).isZero();
    }
}
