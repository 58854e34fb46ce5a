package io.kvpager.cli.demo;

import java.time.Duration;
import java.util.List;
import java.util.Locale;

/**
 * Which trace a demo run serves: a seeded {@link TracePreset} or a recorded trace replayed
 * ({@link TraceReplay}); exactly one of the two.
 *
 * @param preset the preset, or {@code null} for a replay
 * @param replay the recorded trace, or {@code null} for a preset
 */
public record TraceChoice(TracePreset preset, TraceReplay replay) {

    /** The default: a steady base for every model plus bursts at independent times (docs/sharing.md says why). */
    public static final TracePreset DEFAULT_PRESET = TracePreset.STEADY_BURSTS;

    public TraceChoice {
        if ((preset == null) == (replay == null)) {
            throw new IllegalArgumentException("a trace is a preset or a replay, not both or neither");
        }
    }

    public static TraceChoice of(TracePreset preset) {
        return new TraceChoice(preset, null);
    }

    public static TraceChoice of(TraceReplay replay) {
        return new TraceChoice(null, replay);
    }

    /**
     * The requests of a run and what ran, in words: a replay kept at random, a preset generated for
     * memory scaled until the trace offers {@code load} of the caches' memory by
     * {@link OfferedLoad}'s estimate (its bursts and base grow or shrink together, and its output
     * lengths follow the step that load runs at).
     */
    TraceReplay.Plan plan(OfferedLoad.Scale scale, double load, long seed) {
        if (replay != null) {
            return replay.plan(scale, load, seed);
        }
        double sizing = 1;
        Duration step = scale.minStep();
        List<TraceRequest> best = List.of();
        double bestSizing = sizing;
        double bestMiss = Double.POSITIVE_INFINITY;
        for (int round = 0; round < SIZING_ROUNDS && bestMiss > SIZING_TOLERANCE; round++) {
            List<TraceRequest> requests = ServingTrace.generate(preset, scale.models(), scale.tp(),
                    Math.max(1, Math.round(scale.cacheBytes() * sizing)), scale.duration(), step, seed);
            OfferedLoad.Demand demand = OfferedLoad.Demand.of(scale, requests);
            double offered = OfferedLoad.of(scale, demand).all();
            if (Math.abs(offered / load - 1) < bestMiss) {
                best = requests;
                bestSizing = sizing;
                bestMiss = Math.abs(offered / load - 1);
            }
            sizing *= load / offered;
            // the next round's output lengths follow the step this trace would take at the load asked, not at the load it offered
            step = OfferedLoad.of(scale, demand.scaled(load / offered)).step();
        }
        return new TraceReplay.Plan(best, String.format(Locale.ROOT, "preset %s (%s), seed %d, sized %.2fx to offer %.2fx the caches' "
                + "memory in pages (--load)", preset.flag(), preset.meaning(), seed, bestSizing, load));
    }

    /**
     * Rounds of sizing a preset to its load, at most: each scales the memory it is generated for by
     * what the last one missed by (a trace drawn again for other memory differs a little at random,
     * so the nearest round is kept).
     */
    private static final int SIZING_ROUNDS = 12;
    /** How near the load a preset's estimate has to come to stop sizing. */
    private static final double SIZING_TOLERANCE = 0.01;

    /** A short name for headers. */
    public String name() {
        return replay != null ? replay.name() : preset.flag();
    }
}
