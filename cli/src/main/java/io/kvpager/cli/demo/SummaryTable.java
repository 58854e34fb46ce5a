package io.kvpager.cli.demo;

import io.kvpager.cli.ByteSize;
import io.kvpager.cli.TextTable;
import java.util.EnumSet;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.stream.Collectors;

/**
 * The demo's closing summary: one row per model, then misses by reason, the static-split
 * comparison, what the seeded trace asked for (the same on every run with that seed) and whether
 * the run's invariants held.
 */
public final class SummaryTable {

    private SummaryTable() {
    }

    public static String render(DemoReport report) {
        DemoSettings settings = report.settings();
        TextTable table = new TextTable("model", "finished", "running at end", "tokens", "allocs", "misses", "preempted", "alloc p50 µs",
                "alloc p99 µs", "maps", "unmaps", "peak", "mean", "static: refused allocs", "static: refused requests");
        long staticAllocs = 0;
        long staticRequests = 0;
        for (ModelReport m : report.models()) {
            table.row(m.model().name(), m.served() + "/" + m.arrived(), m.unfinished(), m.tokens(), m.allocs(), m.totalMisses(), m.preemptions(),
                    micros(m.p50Micros()), micros(m.p99Micros()), m.maps(), m.unmaps(), ByteSize.format(m.peakBytes()),
                    ByteSize.format(m.meanBytes()), m.staticRefusedAllocs(), m.staticRefusedRequests());
            staticAllocs += m.staticRefusedAllocs();
            staticRequests += m.staticRefusedRequests();
        }
        StringBuilder out = new StringBuilder();
        out.append(String.format(Locale.ROOT, "%d models sharing %s GPU %d (%s), tp %d each, %d s, seed %d%n%n",
                report.models().size(), settings.device(), settings.gpu(), ByteSize.format(settings.gpuBytes()), settings.tp(),
                settings.duration().toSeconds(), settings.seed()));
        if (report.stoppedEarly()) {
            out.append(String.format(Locale.ROOT, "stopped after %.1f s of %d s: the figures are those of the run so far%n%n",
                    report.stoppedAtMs() / 1000.0, settings.duration().toSeconds()));
        }
        out.append(table.render()).append('\n');
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
        out.append(String.format(Locale.ROOT,
                "a static split (%s per model) would have refused at least %d of the allocations served here, in %d requests%n",
                ByteSize.format(settings.staticShareBytes()), staticAllocs, staticRequests));
        for (DemoMiss miss : seen) {
            out.append("  ").append(miss).append(": ").append(miss.meaning()).append('\n');
        }
        TraceTotals trace = report.trace();
        out.append(String.format(Locale.ROOT, "trace of seed %d: %,d requests, %,d prompt and %,d output tokens (the same on every run "
                        + "with this seed and these settings; what finishes in time, the misses and the latencies depend on timing)%n",
                settings.seed(), trace.requests(), trace.promptTokens(), trace.outputTokens()));
        out.append(report.ok()
                ? "invariants held: " + (report.stoppedEarly() ? "" : "every model served, ")
                        + "no failed call, no block held or page mapped after the drain"
                        + (settings.device().equals("sim") ? ", no handle left on the simulated GPU" : "") + "\n"
                : "invariants broken: " + report.violations().size() + " (listed on stderr)\n");
        return out.toString();
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
