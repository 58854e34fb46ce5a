package io.kvpager.cli.demo;

import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.Vertx;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * Decode attention's time on the simulated device: what {@link DemoAttention} spends on the H200,
 * modelled rather than run, so that the simulated demo's steps last as long as the GPU's do.
 *
 * <p>A step of a model reads the KV of every decoding sequence, every layer and rank:
 * {@code tokens x bytesPerToken} bytes, at the run's attention bandwidth ({@code --attention-bandwidth};
 * by default {@link #H200_BANDWIDTH_BYTES_PER_S}, the H200's measured), plus {@link #LAUNCH_MICROS}
 * per kernel launch (one per layer and rank), and the model's weights (as {@link WeightFormat} holds
 * them) at {@link #WEIGHT_BYTES_PER_S}, as {@link WeightReads} reads them on the GPU: every step that
 * has a request running, decoding or prefilling, reads them once. All
 * models share one device: as on the GPU, where {@link DemoAttention} runs every model's kernels on
 * one stream in the order they are asked, a step's attention starts when the attention asked
 * before it has finished, so models stepping at once share the bandwidth. A step's batch fence (and
 * so its next step) waits for its attention, so a model's step takes max(step, its attention plus
 * the attention queued ahead of it).
 *
 * <p>Calibration (docs/sharing.md): H200 runs of {@code kvpager demo --device cuda} measured 10.9 to
 * 13.4 ms per step for the 7b and 13b presets at 4.0 to 4.2 TB/s, and 7.4 to 8.6 ms for the 70b
 * (160 launches of few thread blocks: 2.0 to 2.6 TB/s). From the same batches this model gives
 * 2 % to 10 % more than was measured, except for one 70b run, 16 % less.
 */
final class SimAttention {

    /** Bytes per second attention reads at on the H200: its measured decode attention bandwidth, the demo's default. */
    static final double H200_BANDWIDTH_BYTES_PER_S = Double.parseDouble(DemoSettings.DEFAULT_ATTENTION_TBPS) * 1e12;
    /** Fixed time per kernel launch (one per layer and rank), fitted to the 70b's launch-bound steps. */
    static final double LAUNCH_MICROS = 20;
    /** Bytes per second the weights are read at: {@link WeightReads}' streaming read, 4.52 to 4.58 TB/s on the H200. */
    static final double WEIGHT_BYTES_PER_S = 4.55e12;

    private final Vertx vertx;
    /** Bytes per second this device's attention reads KV at. */
    private final double bandwidth;
    private final List<Model> models = new ArrayList<>();
    /** When the attention asked so far will have finished, on {@link System#nanoTime}. */
    private long busyUntilNanos = Long.MIN_VALUE;

    SimAttention(Vertx vertx, double bandwidth) {
        this.vertx = vertx;
        this.bandwidth = bandwidth;
    }

    /**
     * The modelled time of one step's attention over {@code tokens} tokens of KV read at {@code bandwidth}
     * bytes per second (no launch when none decode).
     */
    static long stepNanos(ModelProfile model, int tp, long tokens, double bandwidth) {
        if (tokens == 0) {
            return 0;
        }
        double bytes = (double) tokens * model.bytesPerToken(tp);
        return Math.round(bytes / bandwidth * 1e9 + launchNanos(model, tp));
    }

    /** The modelled launch time of one step's attention: one kernel per layer and rank. */
    static double launchNanos(ModelProfile model, int tp) {
        return (double) model.layers() * tp * LAUNCH_MICROS * 1e3;
    }

    /** The modelled time of one step's read of the weights. */
    static long weightNanos(ModelProfile model, WeightFormat weights) {
        return Math.round(model.weightBytes(weights) / WEIGHT_BYTES_PER_S * 1e9);
    }

    /** The kernels of one model; its steps queue on this device behind every model's. */
    BatchKernels kernels(ModelProfile model, int tp, WeightFormat weights) {
        Model m = new Model(model, tp);
        models.add(m);
        long weightNanos = weightNanos(model, weights);
        return (tables, lengths) -> {
            long tokens = 0;
            for (int length : lengths) {
                tokens += length;
            }
            long nanos = stepNanos(model, tp, tokens, bandwidth) + weightNanos;
            long now = System.nanoTime();
            long done;
            synchronized (this) {
                long start = busyUntilNanos == Long.MIN_VALUE ? now : Math.max(now, busyUntilNanos);
                busyUntilNanos = start + nanos;
                done = busyUntilNanos;
                m.steps++;
                m.sequences += lengths.length;
                m.nanos += nanos;
                m.weightNanos += weightNanos;
                m.bytes += tokens * model.bytesPerToken(tp);
            }
            long delayMs = Math.max(1, (done - now + 999_999) / 1_000_000);
            Promise<Void> finished = Promise.promise();
            vertx.setTimer(delayMs, id -> finished.complete());
            return finished.future();
        };
    }

    /** One line per model, with a header, as {@link DemoAttention#summary()} prints them. */
    synchronized List<String> summary() {
        List<String> lines = new ArrayList<>();
        lines.add(String.format(Locale.ROOT, "decode steps modelled on the simulated GPU (KV at %.1f TB/s, %.0f us per launch, weights at %.2f TB/s; "
                        + "one device shared by every model):", bandwidth / 1e12, LAUNCH_MICROS, WEIGHT_BYTES_PER_S / 1e12));
        for (Model m : models) {
            lines.add("  " + (m.steps == 0 ? String.format(Locale.ROOT, "%-5s no decode step ran attention", m.model.name())
                    : String.format(Locale.ROOT, "%-5s %6d steps  %6.1f sequences/step  %8.3f ms/step (weights %.3f)  %7.1f MiB KV/step",
                            m.model.name(), m.steps, (double) m.sequences / m.steps, m.nanos / 1e6 / m.steps,
                            m.weightNanos / 1e6 / m.steps, m.bytes / (double) m.steps / (1 << 20))));
        }
        return lines;
    }

    private static final class Model {
        final ModelProfile model;
        final int tp;
        long steps;
        long sequences;
        long nanos;
        long weightNanos;
        long bytes;

        Model(ModelProfile model, int tp) {
            this.model = model;
            this.tp = tp;
        }
    }
}
