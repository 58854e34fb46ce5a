package io.kvpager.bench;

import java.util.Arrays;

/**
 * Latencies in nanoseconds, kept whole so that percentiles are exact. The one sample store of
 * every benchmark here and in the cluster module's.
 */
public final class LatencySamples {

    private long[] samples = new long[1 << 16];
    private int size;

    public void add(long nanos) {
        if (size == samples.length) {
            samples = Arrays.copyOf(samples, size * 2);
        }
        samples[size++] = nanos;
    }

    public int size() {
        return size;
    }

    /** The {@code p}-th percentile ({@code 0 < p <= 100}) in microseconds. */
    public double percentileMicros(double p) {
        if (size == 0) {
            return Double.NaN;
        }
        long[] sorted = Arrays.copyOf(samples, size);
        Arrays.sort(sorted);
        int index = (int) Math.min(size - 1, Math.max(0, Math.ceil(p / 100 * size) - 1));
        return sorted[index] / 1_000.0;
    }
}
