package io.kvpager.harness.gpu;

import java.util.Arrays;
import java.util.Locale;

/**
 * The median of a few rounds' figures and how far they spread: the runner reports every figure
 * this way, since the driver's own cost moves by up to 2x between rounds on one machine.
 *
 * @param median the median of the rounds
 * @param min the lowest round
 * @param max the highest round
 */
record Spread(double median, double min, double max) {

    /** The spread of {@code rounds}, one figure per round. */
    static Spread of(double[] rounds) {
        if (rounds.length == 0) {
            throw new IllegalArgumentException("a spread needs at least one round");
        }
        double[] sorted = rounds.clone();
        Arrays.sort(sorted);
        return new Spread(median(sorted), sorted[0], sorted[sorted.length - 1]);
    }

    /** The median of {@code values}. */
    static double median(double[] values) {
        double[] sorted = values.clone();
        Arrays.sort(sorted);
        int n = sorted.length;
        return n % 2 == 1 ? sorted[n / 2] : (sorted[n / 2 - 1] + sorted[n / 2]) / 2;
    }

    /** Whether {@code value} lies between the lowest and the highest round. */
    boolean contains(double value) {
        return value >= min && value <= max;
    }

    /** {@code median (min–max)} with one decimal, e.g. {@code 61.8 (55.0–80.2)}. */
    String micros() {
        return String.format(Locale.ROOT, "%.1f (%.1f–%.1f)", median, min, max);
    }

    /** {@code median x (min–max)} with two decimals, e.g. {@code 1.04x (0.97–1.12)}. */
    String ratio() {
        return String.format(Locale.ROOT, "%.2fx (%.2f–%.2f)", median, min, max);
    }
}
