package io.kvpager.metrics;

import io.micrometer.core.instrument.Timer;
import java.time.Duration;

/**
 * Timers whose Prometheus form has histogram buckets ({@code _bucket{le=...}}), from 10 µs to a
 * minute, so that percentiles can be computed across processes and over any window, which a
 * client-side percentile cannot.
 */
final class LatencyTimers {

    private LatencyTimers() {
    }

    static Timer.Builder histogram(String name, String description) {
        return Timer.builder(name).description(description).publishPercentileHistogram()
                .minimumExpectedValue(Duration.ofNanos(10_000)).maximumExpectedValue(Duration.ofMinutes(1));
    }
}
