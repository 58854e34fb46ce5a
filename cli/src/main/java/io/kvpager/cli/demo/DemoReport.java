package io.kvpager.cli.demo;

import java.util.List;

/**
 * The outcome of a demo run.
 *
 * @param settings what was run
 * @param models one report per model, in the order of the settings
 * @param trace what the seeded trace asked for (the same for a seed, whatever the timing)
 * @param traceDescription which trace ran, with its slicing and scaling, in words
 * @param offered what the trace offers the GPU, per model and in all
 * @param ceiling the most tokens any policy can decode from the trace before the end, per model
 * @param grants the budget against the broker's grants, sampled through the run
 * @param stoppedAtMs when the run was stopped before its duration (Ctrl-C), in ms from its start; -1 when it ran to the end
 * @param violations the run's own invariants that did not hold; empty for a good run
 * @param account where the caches' memory went over the run ({@link MemoryAccount})
 */
public record DemoReport(DemoSettings settings, List<ModelReport> models, TraceTotals trace, String traceDescription,
        OfferedLoad offered, TokenCeiling ceiling, GrantSamples grants, long stoppedAtMs, List<String> violations,
        MemoryAccount.Totals account) {

    public DemoReport {
        models = List.copyOf(models);
        violations = List.copyOf(violations);
    }

    public boolean ok() {
        return violations.isEmpty();
    }

    /** The policy the run served under. */
    public SharingPolicy policy() {
        return settings.policy();
    }

    /** Whether the run was stopped before its duration. */
    public boolean stoppedEarly() {
        return stoppedAtMs >= 0;
    }
}
