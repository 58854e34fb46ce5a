package io.kvpager.cli.demo;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;

class MemoryTimelineTest {

    @Test
    void peakAndTimeWeightedMean() {
        MemoryTimeline timeline = new MemoryTimeline();
        timeline.sample(0, 100);
        timeline.sample(1, 300);
        timeline.sample(4, 0);
        // 100 for 1 s, 300 for 3 s over 4 s.
        assertThat(timeline.mean()).isEqualTo(250);
        assertThat(timeline.peak()).isEqualTo(300);
        assertThat(timeline.last()).isZero();
        assertThat(timeline.size()).isEqualTo(3);
    }

    @Test
    void keepsEverySampleInOrder() {
        MemoryTimeline timeline = new MemoryTimeline();
        for (int i = 0; i < 1000; i++) {
            timeline.sample(i / 10.0, i);
        }
        assertThat(timeline.seconds()).hasSize(1000).isSorted();
        assertThat(timeline.bytes()[999]).isEqualTo(999);
        assertThatThrownBy(() -> timeline.sample(1, 0)).isInstanceOf(IllegalArgumentException.class);
    }
}
