package io.kvpager.cli.demo;

import java.util.Arrays;

/** Samples of the GPU memory one model holds (mapped pages on all its ranks), over the run. */
final class MemoryTimeline {

    private double[] seconds = new double[256];
    private double[] bytes = new double[256];
    private int count;

    void sample(double atSeconds, long mappedBytes) {
        if (count > 0 && atSeconds < seconds[count - 1]) {
            throw new IllegalArgumentException("samples must come in time order: " + atSeconds + " after " + seconds[count - 1]);
        }
        if (count == seconds.length) {
            seconds = Arrays.copyOf(seconds, count * 2);
            bytes = Arrays.copyOf(bytes, count * 2);
        }
        seconds[count] = atSeconds;
        bytes[count] = mappedBytes;
        count++;
    }

    int size() {
        return count;
    }

    double[] seconds() {
        return Arrays.copyOf(seconds, count);
    }

    double[] bytes() {
        return Arrays.copyOf(bytes, count);
    }

    long last() {
        return count == 0 ? 0 : (long) bytes[count - 1];
    }

    long peak() {
        double peak = 0;
        for (int i = 0; i < count; i++) {
            peak = Math.max(peak, bytes[i]);
        }
        return (long) peak;
    }

    /** The time-weighted mean: each sample holds until the next one. */
    long mean() {
        if (count == 0) {
            return 0;
        }
        if (count == 1) {
            return (long) bytes[0];
        }
        double area = 0;
        for (int i = 0; i + 1 < count; i++) {
            area += bytes[i] * (seconds[i + 1] - seconds[i]);
        }
        double span = seconds[count - 1] - seconds[0];
        return span <= 0 ? (long) bytes[count - 1] : (long) (area / span);
    }
}
