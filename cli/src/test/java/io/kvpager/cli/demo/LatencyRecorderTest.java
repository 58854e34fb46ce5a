package io.kvpager.cli.demo;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;

class LatencyRecorderTest {

    @Test
    void givesNearestRankPercentilesInMicros() {
        LatencyRecorder recorder = new LatencyRecorder();
        for (int i = 100; i >= 1; i--) {
            recorder.record(i * 1_000L);
        }
        assertThat(recorder.count()).isEqualTo(100);
        assertThat(recorder.percentileMicros(50)).isEqualTo(50.0);
        assertThat(recorder.percentileMicros(99)).isEqualTo(99.0);
        assertThat(recorder.percentileMicros(100)).isEqualTo(100.0);
    }

    @Test
    void growsPastItsFirstArray() {
        LatencyRecorder recorder = new LatencyRecorder();
        for (int i = 0; i < 5000; i++) {
            recorder.record(7_000);
        }
        assertThat(recorder.count()).isEqualTo(5000);
        assertThat(recorder.percentileMicros(99)).isEqualTo(7.0);
    }

    @Test
    void emptyIsNotANumberAndBadInputIsRefused() {
        LatencyRecorder recorder = new LatencyRecorder();
        assertThat(recorder.percentileMicros(50)).isNaN();
        assertThatThrownBy(() -> recorder.record(-1)).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> recorder.percentileMicros(0)).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> recorder.percentileMicros(101)).isInstanceOf(IllegalArgumentException.class);
    }
}
