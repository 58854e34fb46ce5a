package io.kvpager.cli.demo;

import io.kvpager.cli.ByteSize;
import io.kvpager.cli.TextTable;
import java.util.Locale;
import java.util.Map;
import java.util.stream.Collectors;

/** The demo's closing summary: one row per model, then misses by reason and the static-split comparison. */
public final class SummaryTable {

    private SummaryTable() {
    }

    public static String render(DemoReport report) {
        DemoSettings settings = report.settings();
        TextTable table = new TextTable("model", "served", "tokens", "allocs", "misses", "preempted", "alloc p50 µs",
                "alloc p99 µs", "maps", "unmaps", "peak", "mean", "static: refused allocs", "static: refused requests");
        long staticAllocs = 0;
        long staticRequests = 0;
        for (ModelReport m : report.models()) {
            table.row(m.model().name(), m.served() + "/" + m.arrived(), m.tokens(), m.allocs(), m.totalMisses(), m.preemptions(),
                    micros(m.p50Micros()), micros(m.p99Micros()), m.maps(), m.unmaps(), ByteSize.format(m.peakBytes()),
                    ByteSize.format(m.meanBytes()), m.staticRefusedAllocs(), m.staticRefusedRequests());
            staticAllocs += m.staticRefusedAllocs();
            staticRequests += m.staticRefusedRequests();
        }
        StringBuilder out = new StringBuilder();
        out.append(String.format(Locale.ROOT, "%d models sharing %s GPU %d (%s), tp %d each, %d s, seed %d%n%n",
                report.models().size(), settings.device(), settings.gpu(), ByteSize.format(settings.gpuBytes()), settings.tp(),
                settings.duration().toSeconds(), settings.seed()));
        out.append(table.render()).append('\n');
        for (ModelReport m : report.models()) {
            if (m.totalMisses() > 0) {
                out.append("misses of ").append(m.model().name()).append(": ").append(byCount(m.misses())).append('\n');
            }
            if (m.totalFailures() > 0) {
                out.append("failures of ").append(m.model().name()).append(": ").append(byCount(m.failures())).append('\n');
            }
        }
        out.append(String.format(Locale.ROOT,
                "a static split (%s per model) would have refused at least %d of the allocations served here, in %d requests%n",
                ByteSize.format(settings.staticShareBytes()), staticAllocs, staticRequests));
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
