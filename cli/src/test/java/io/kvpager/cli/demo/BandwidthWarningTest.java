package io.kvpager.cli.demo;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

/** {@link DemoRun#bandwidthWarning(double, double)}: the trace sized at one bandwidth, the GPU reading at another. */
class BandwidthWarningTest {

    @Test
    void anH100ReadingAtTheH200sDefaultIsToldWhatToPass() {
        // the fastest model's read on an H100 (docs/sharing.md), the trace sized at the default 4.3 TB/s
        assertThat(DemoRun.bandwidthWarning(4.3e12, 2.74e12)).hasValueSatisfying(w -> assertThat(w)
                .contains("2.74 TB/s at best, below the 4.3 TB/s the trace was sized at")
                .contains("offered more than this GPU serves")
                .endsWith("--attention-bandwidth 2.7"));
    }

    @Test
    void aFasterGpuIsToldTheTraceWasLight() {
        assertThat(DemoRun.bandwidthWarning(4.3e12, 7.95e12)).hasValueSatisfying(w -> assertThat(w)
                .contains("above the 4.3 TB/s").contains("offered less than").endsWith("--attention-bandwidth 7.9"));
    }

    @Test
    void readsNearTheSizedBandwidthOrNoAttentionAtAllWarnOfNothing() {
        // the H200 at the default (its 7b and 13b read 4.0 to 4.2 TB/s), an H100 at 2.7
        assertThat(DemoRun.bandwidthWarning(4.3e12, 4.0e12)).isEmpty();
        assertThat(DemoRun.bandwidthWarning(2.7e12, 2.75e12)).isEmpty();
        assertThat(DemoRun.bandwidthWarning(4.3e12, 0.8 * 4.3e12)).isEmpty();
        assertThat(DemoRun.bandwidthWarning(4.3e12, 1.25 * 4.3e12)).isEmpty();
        assertThat(DemoRun.bandwidthWarning(4.3e12, Double.NaN)).isEmpty();
    }

    @Test
    void theSuggestionIsNeverBelowWhatTheOptionTakes() {
        assertThat(DemoRun.bandwidthWarning(4.3e12, 0.02e12)).hasValueSatisfying(w -> assertThat(w).endsWith("--attention-bandwidth 0.1"));
    }
}
