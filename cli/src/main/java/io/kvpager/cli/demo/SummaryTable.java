package io.kvpager.cli.demo;

import io.kvpager.cli.text.ByteSize;
import io.kvpager.cli.text.TextTable;
import java.util.EnumSet;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.stream.Collectors;

/**
 * One demo run's closing summary: what each model's requests saw (finished, tokens, time to first
 * token, time per output token, service targets met, misses, preemptions, reclaims), then the
 * allocator's figures, misses by reason, the GPU's budget against the broker's grants, what the
 * trace asked for and whether the run's invariants held.
 */
public final class SummaryTable {

    private SummaryTable() {
    }

    public static String render(DemoReport report) {
        DemoSettings settings = report.settings();
        TextTable service = new TextTable("model", "finished", "running at end", "tokens", "TTFT p50 ms", "TTFT p99 ms", "TPOT p99 ms",
                "SLO met", "misses", "preempted", "recomputed tokens", "reclaims", "reclaim preempted", "reclaim wait p50 ms", "reclaim wait p99 ms");
        TextTable memory = new TextTable("model", "allocs", "alloc p50 µs", "alloc p99 µs", "maps", "unmaps", "peak", "mean", "guarantee");
        for (ModelReport m : report.models()) {
            ModelReport.Service s = m.service();
            ModelReport.Reclaims r = m.reclaims();
            service.row(m.model().name(), m.served() + "/" + m.arrived(), m.unfinished(), m.tokens(), ms(s.ttftP50Ms()), ms(s.ttftP99Ms()),
                    ms(s.tpotP99Ms()), percent(m.sloAttainment()), m.totalMisses(), m.preemptions(), m.recomputedTokens(), r.asked(), r.preemptions(),
                    ms(r.waitP50Ms()), ms(r.waitP99Ms()));
            memory.row(m.model().name(), m.allocs(), micros(m.p50Micros()), micros(m.p99Micros()), m.maps(), m.unmaps(),
                    ByteSize.format(m.peakBytes()), ByteSize.format(m.meanBytes()), r.guaranteeBytes() < 0 ? "-" : ByteSize.format(r.guaranteeBytes()));
        }
        StringBuilder out = new StringBuilder();
        out.append(String.format(Locale.ROOT, "%d models sharing %s GPU %d (%s), tp %d each, %d s, seed %d, load %.2f, policy %s: %s%n",
                report.models().size(), settings.device(), settings.gpu(), ByteSize.format(settings.gpuBytes()), settings.tp(),
                settings.duration().toSeconds(), settings.seed(), settings.load(), settings.policy().flag(), settings.policy().meaning()));
        out.append(String.format(Locale.ROOT, "weights: %s, %s on the GPU, read by every step%n", settings.weights().flag(),
                ByteSize.format(settings.weightBytes())));
        out.append("trace: ").append(report.traceDescription()).append('\n');
        out.append(String.format(Locale.ROOT, "service targets: time to first token <= %d ms and time per output token <= %d ms%n%n",
                settings.targets().ttft().toMillis(), settings.targets().tpot().toMillis()));
        if (report.stoppedEarly()) {
            out.append(String.format(Locale.ROOT, "stopped after %.1f s of %d s: the figures are those of the run so far%n%n",
                    report.stoppedAtMs() / 1000.0, settings.duration().toSeconds()));
        }
        out.append(service.render()).append('\n').append(memory.render()).append('\n');
        Set<DemoMiss> seen = EnumSet.noneOf(DemoMiss.class);
        for (ModelReport m : report.models()) {
            if (m.totalMisses() > 0) {
                out.append("misses of ").append(m.model().name()).append(": ").append(byCount(m.misses())).append('\n');
                seen.addAll(m.misses().keySet());
            }
            if (m.totalFailures() > 0) {
                out.append("failures of ").append(m.model().name()).append(": ").append(byCount(m.failures())).append('\n');
            }
        }
        for (DemoMiss miss : seen) {
            out.append("  ").append(miss).append(": ").append(miss.meaning()).append('\n');
        }
        out.append(grants(report.grants())).append('\n');
        TraceTotals trace = report.trace();
        out.append(String.format(Locale.ROOT, "trace of seed %d: %,d requests, %,d prompt and %,d output tokens (the same on every run "
                        + "with this seed and these settings; what finishes in time, the misses and the latencies depend on timing)%n",
                settings.seed(), trace.requests(), trace.promptTokens(), trace.outputTokens()));
        out.append(report.ok()
                ? "invariants held: " + (report.stoppedEarly() ? "" : "every model served, ")
                        + "no failed call, no over-grant, no block held or page mapped after the drain"
                        + (settings.device().equals("sim") ? ", no handle left on the simulated GPU" : "") + "\n"
                : "invariants broken: " + report.violations().size() + " (listed on stderr)\n");
        return out.toString();
    }

    /** The budget against the broker's grants, in one line. */
    static String grants(GrantSamples g) {
        if (g.samples() == 0) {
            return "grants: no sample of the broker could be read";
        }
        return String.format(Locale.ROOT, "grants: %d samples every %d ms; the broker's taken bytes peaked at %s of a %s budget (%s); "
                        + "the caches' leases summed to at most %s",
                g.samples(), DemoRun.SAMPLE_MS, ByteSize.format(g.maxTakenBytes()), ByteSize.format(g.capacityBytes()),
                g.anyOverGrant() ? g.overGranted() + " samples over-granted" : "no sample over-granted",
                ByteSize.format(g.maxLeasedSumBytes()));
    }

    static String ms(double value) {
        return Double.isNaN(value) ? "-" : String.format(Locale.ROOT, "%.1f", value);
    }

    static String percent(double share) {
        return Double.isNaN(share) ? "-" : String.format(Locale.ROOT, "%.1f%%", share * 100);
    }

    private static String micros(double value) {
        return Double.isNaN(value) ? "-" : String.format(Locale.ROOT, "%.1f", value);
    }

    private static <K> String byCount(Map<K, Long> counts) {
        return counts.entrySet().stream()
                .sorted(Map.Entry.<K, Long>comparingByValue().reversed())
                .map(e -> e.getKey() + " " + e.getValue())
                .collect(Collectors.joining(", "));
    }
}
