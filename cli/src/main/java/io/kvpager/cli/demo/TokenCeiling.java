package io.kvpager.cli.demo;

import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;

/**
 * The most tokens any policy can decode from a trace before its run ends: each request admitted at
 * the engine step its arrival falls in, never waiting, never preempted, its prompt prefilled in
 * chunks of {@link ModelServer#PREFILL_CHUNK} tokens, one step each, then one token per step until
 * it is done or the run is over. Step {@code k} of an engine starts no earlier than {@code k} times
 * {@code --step} from the start of the run, and a step that starts late skips the ticks it overran,
 * so no engine gives a request more steps than this counts, whatever memory it is given (counting
 * from the step the arrival falls in, not the next one, keeps that true when a step starts up to
 * one step late and admits a request that arrived after its tick). A policy's tokens over this
 * ceiling say how much of what the trace offered it served, and a ratio between two policies can
 * never exceed the ceiling over the lower one.
 *
 * <p>A function of the trace and the settings alone, like {@link TraceTotals}.
 *
 * @param models the models, in the trace's order
 * @param perModel each model's ceiling, in tokens
 * @param step the engines' step the ceiling counts
 */
public record TokenCeiling(List<String> models, List<Long> perModel, Duration step) {

    public TokenCeiling {
        models = List.copyOf(models);
        perModel = List.copyOf(perModel);
        if (models.size() != perModel.size()) {
            throw new IllegalArgumentException(models.size() + " models but " + perModel.size() + " ceilings");
        }
    }

    /** The ceiling of {@code requests} over a run of {@code duration} with engines stepping every {@code step}. */
    static TokenCeiling of(List<ModelProfile> models, Duration duration, Duration step, List<TraceRequest> requests) {
        long[] tokens = new long[models.size()];
        for (TraceRequest r : requests) {
            tokens[r.model()] += reachable(duration.toMillis(), step.toMillis(), r);
        }
        return new TokenCeiling(models.stream().map(ModelProfile::name).toList(), Arrays.stream(tokens).boxed().toList(), step);
    }

    /**
     * The tokens one request can decode before the end: the steps from the one its arrival falls in
     * to the last one before the end, less its prefill steps, at most its output.
     */
    static long reachable(long durationMs, long stepMs, TraceRequest r) {
        if (durationMs < 1 || stepMs < 1) {
            throw new IllegalArgumentException("duration and step must be at least 1 ms, got " + durationMs + " and " + stepMs);
        }
        long steps = Math.ceilDiv(durationMs, stepMs) - r.arrivalMs() / stepMs;
        long prefill = Math.ceilDiv(r.promptTokens(), ModelServer.PREFILL_CHUNK);
        return Math.clamp(steps - prefill, 0, r.outputTokens());
    }

    /** Every model's ceiling together. */
    public long all() {
        return perModel.stream().mapToLong(Long::longValue).sum();
    }

    /** A model's ceiling, by its index in the trace. */
    public long forModel(int model) {
        return perModel.get(model);
    }

    /**
     * E.g. "the most any policy can decode before the end (each request admitted in the step it arrives in, never waiting,
     * a token per 20 ms step after its prefill): 7b 21,874 tokens, 13b 19,020, 70b 20,340; all 61,234".
     */
    @Override
    public String toString() {
        StringBuilder out = new StringBuilder(String.format(Locale.ROOT,
                "the most any policy can decode before the end (each request admitted in the step it arrives in, never waiting, a token "
                        + "per %d ms step after its prefill):", step.toMillis()));
        for (int m = 0; m < models.size(); m++) {
            out.append(String.format(Locale.ROOT, " %s %,d%s", models.get(m), perModel.get(m), m == 0 ? " tokens" : ""))
                    .append(m == models.size() - 1 ? ";" : ",");
        }
        return out.append(String.format(Locale.ROOT, " all %,d", all())).toString();
    }
}
