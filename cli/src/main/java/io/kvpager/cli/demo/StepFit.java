package io.kvpager.cli.demo;

import java.util.List;
import java.util.Locale;
import java.util.Optional;

/**
 * How the GPU's attention steps of a run compare with the step model the trace was sized by: the
 * KV bytes each step reads at {@code --attention-bandwidth}, plus {@link SimAttention#LAUNCH_MICROS}
 * per kernel launch ({@link OfferedLoad} and {@link SimAttention} both use it). Compared like with
 * like, over the same reads: the modelled time of every step the models ran against the time the
 * GPU took for them. The bandwidth that makes the model give the GPU's time is the one to size a
 * trace for this GPU with.
 *
 * <p>A model's KV read per second of its own steps is not that figure: at the demo's batches the
 * launches take a good part of a step (the 7b's 64 a step, 1.3 ms modelled), so it reads below the
 * model's bandwidth while its steps take no longer than the model says.
 *
 * @param steps the attention steps, all models
 * @param bytes the KV bytes they read
 * @param launchNanos the launch time the model gives those steps
 * @param gpuNanos the time the GPU took for them
 */
record StepFit(long steps, double bytes, double launchNanos, double gpuNanos) {

    /**
     * One model's steps: {@code steps} of them read {@code bytes} in {@code gpuNanos}, each launching
     * what the model charges {@code model} on {@code tp} ranks ({@link SimAttention#launchNanos}).
     */
    static StepFit of(ModelProfile model, int tp, long steps, double bytes, double gpuNanos) {
        return new StepFit(steps, bytes, steps * SimAttention.launchNanos(model, tp), gpuNanos);
    }

    /** Every model's steps together. */
    static StepFit sum(List<StepFit> fits) {
        StepFit all = new StepFit(0, 0, 0, 0);
        for (StepFit f : fits) {
            all = new StepFit(all.steps + f.steps, all.bytes + f.bytes, all.launchNanos + f.launchNanos, all.gpuNanos + f.gpuNanos);
        }
        return all;
    }

    /** The time the model gives these steps at {@code bandwidth} bytes per second. */
    double modelledNanos(double bandwidth) {
        return bytes / bandwidth * 1e9 + launchNanos;
    }

    /**
     * The bandwidth at which the model gives the GPU's time; NaN without a step, infinite when the
     * GPU took no longer than the modelled launches alone.
     */
    double fittedBandwidth() {
        if (steps == 0) {
            return Double.NaN;
        }
        double reading = gpuNanos - launchNanos;
        return reading <= 0 ? Double.POSITIVE_INFINITY : bytes / (reading * 1e-9);
    }

    /** One line: the GPU's time, the model's at {@code sizedAt}, and the bandwidth that fits; empty without a step. */
    Optional<String> summary(double sizedAt) {
        if (steps == 0) {
            return Optional.empty();
        }
        return Optional.of(String.format(Locale.ROOT,
                "the trace's step model (KV at %.1f TB/s, %.0f us a launch) gives these steps %.2f s of attention, the GPU took %.2f s (%.2fx); %s",
                sizedAt / 1e12, SimAttention.LAUNCH_MICROS, modelledNanos(sizedAt) / 1e9, gpuNanos / 1e9, ratio(sizedAt), fitText()));
    }

    /**
     * A warning when the GPU took less than 0.8x or more than 1.25x the time the model gives its
     * steps at {@code sizedAt}, the bandwidth the trace was sized at (to two decimals); empty
     * otherwise, and without a step.
     */
    Optional<String> warning(double sizedAt) {
        if (steps == 0) {
            return Optional.empty();
        }
        double ratio = ratio(sizedAt);
        if (ratio >= 0.8 && ratio <= 1.25) {
            return Optional.empty();
        }
        boolean slower = ratio > 1;
        return Optional.of(String.format(Locale.ROOT,
                "the GPU's attention took %.2fx the time the trace was sized for (--attention-bandwidth %.1f and %.0f us a launch): "
                        + "the trace offered %s this GPU serves in time; %s",
                ratio, sizedAt / 1e12, SimAttention.LAUNCH_MICROS, slower ? "more than" : "less than", fitText()));
    }

    /**
     * The GPU's time over the model's at {@code sizedAt}, to two decimals as both lines print it: the
     * warning is decided on the printed ratio, so that it never shows 1.25x or 0.80x.
     */
    private double ratio(double sizedAt) {
        return Math.round(gpuNanos / modelledNanos(sizedAt) * 100) / 100.0;
    }

    private String fitText() {
        double fit = fittedBandwidth();
        if (Double.isInfinite(fit)) {
            return "no bandwidth fits: the GPU took no longer than the model's launches alone";
        }
        double suggested = Math.min(DemoSettings.MAX_ATTENTION_TBPS, Math.max(0.1, Math.round(fit / 1e11) / 10.0));
        return String.format(Locale.ROOT, "these steps fit --attention-bandwidth %.1f", suggested);
    }
}
