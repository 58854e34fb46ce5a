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

    /** The requests of a run and what ran, in words. */
    TraceReplay.Plan plan(List<ModelProfile> models, int tp, long gpuBytes, Duration duration, Duration step, long seed) {
        if (replay != null) {
            return replay.plan(models, tp, gpuBytes, duration, step, seed);
        }
        List<TraceRequest> requests = ServingTrace.generate(preset, models, tp, gpuBytes, duration, step, seed);
        return new TraceReplay.Plan(requests, String.format(Locale.ROOT, "preset %s (%s), seed %d", preset.flag(), preset.meaning(), seed));
    }

    /** A short name for headers. */
    public String name() {
        return replay != null ? replay.name() : preset.flag();
    }
}
