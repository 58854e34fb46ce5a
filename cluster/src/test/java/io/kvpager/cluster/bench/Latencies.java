package io.kvpager.cluster.bench;

import java.util.Arrays;

/** Latencies in nanoseconds, kept whole so that percentiles are exact. */
final class Latencies {

    private long[] samples = new long[1 << 12];
    private int size;

    void add(long nanos) {
        if (size == samples.length) {
            samples = Arrays.copyOf(samples, size * 2);
        }
        samples[size++] = nanos;
    }

    int size() {
        return size;
    }

    /** The {@code p}-th percentile ({@code 0 < p <= 100}) in microseconds. */
    double percentileMicros(double p) {
        if (size == 0) {
            return Double.NaN;
        }
        long[] sorted = Arrays.copyOf(samples, size);
        Arrays.sort(sorted);
        int index = (int) Math.min(size - 1, Math.max(0, Math.ceil(p / 100 * size) - 1));
        return sorted[index] / 1_000.0;
    }
}
