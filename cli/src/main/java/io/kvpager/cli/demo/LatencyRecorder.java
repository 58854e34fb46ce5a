package io.kvpager.cli.demo;

import java.util.Arrays;

/** Every latency of one kind of call, kept exactly (a demo run makes at most a few million calls). */
final class LatencyRecorder {

    private long[] nanos = new long[1024];
    private int count;

    void record(long latencyNanos) {
        if (latencyNanos < 0) {
            throw new IllegalArgumentException("a latency cannot be negative: " + latencyNanos);
        }
        if (count == nanos.length) {
            nanos = Arrays.copyOf(nanos, count * 2);
        }
        nanos[count++] = latencyNanos;
    }

    int count() {
        return count;
    }

    /**
     * The nearest-rank percentile in microseconds, or {@code NaN} when nothing was recorded.
     *
     * @param p in (0, 100]
     */
    double percentileMicros(double p) {
        if (!(p > 0 && p <= 100)) {
            throw new IllegalArgumentException("a percentile is in (0, 100], got " + p);
        }
        if (count == 0) {
            return Double.NaN;
        }
        long[] sorted = Arrays.copyOf(nanos, count);
        Arrays.sort(sorted);
        return sorted[nearestRank(p, count)] / 1_000.0;
    }

    /** The index, in {@code count} values sorted ascending, of their nearest-rank {@code p}th percentile ({@code count} at least 1). */
    static int nearestRank(double p, int count) {
        return Math.max(0, (int) Math.ceil(p / 100 * count) - 1);
    }
}
