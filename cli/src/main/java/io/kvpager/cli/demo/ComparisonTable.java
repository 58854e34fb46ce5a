package io.kvpager.cli.demo;

import io.kvpager.cli.text.TextTable;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Optional;

/**
 * {@code kvpager demo --compare}'s closing table: every policy's run of the same trace, one row per
 * policy and model and one for all models, then the ratios of the arbitrated run to the static
 * split and to first-come sharing, and the measured headline.
 */
public final class ComparisonTable {

    private ComparisonTable() {
    }

    /** Sums of one run over its models. */
    private record Totals(long arrived, long served, long tokens, long met, long misses, long preemptions, long recomputed, long reclaims) {

        static Totals of(DemoReport report) {
            long arrived = 0;
            long served = 0;
            long tokens = 0;
            long met = 0;
            long misses = 0;
            long preemptions = 0;
            long recomputed = 0;
            long reclaims = 0;
            for (ModelReport m : report.models()) {
                arrived += m.arrived();
                served += m.served();
                tokens += m.tokens();
                met += m.service().metTargets();
                misses += m.totalMisses();
                preemptions += m.preemptions();
                recomputed += m.recomputedTokens();
                reclaims += m.reclaims().asked();
            }
            return new Totals(arrived, served, tokens, met, misses, preemptions, recomputed, reclaims);
        }

        double slo() {
            return arrived == 0 ? Double.NaN : (double) met / arrived;
        }
    }

    /**
     * @param reports one per policy, each with the same models in the same order
     */
    public static String render(List<DemoReport> reports) {
        if (reports.isEmpty()) {
            throw new IllegalArgumentException("nothing to compare");
        }
        TextTable table = new TextTable("policy", "model", "finished", "tokens", "of ceiling", "TTFT p50 ms", "TTFT p99 ms", "TPOT p99 ms", "SLO met",
                "misses", "preempted", "recomputed tokens", "reclaims", "reclaim wait p50 ms", "reclaim wait p99 ms", "over-grant", "invariants");
        for (DemoReport report : reports) {
            for (int i = 0; i < report.models().size(); i++) {
                ModelReport m = report.models().get(i);
                ModelReport.Service s = m.service();
                table.row(report.policy().flag(), m.model().name(), m.served() + "/" + m.arrived(), m.tokens(), ratio(m.tokens(), report.ceiling().forModel(i)),
                        SummaryTable.ms(s.ttftP50Ms()), SummaryTable.ms(s.ttftP99Ms()), SummaryTable.ms(s.tpotP99Ms()), SummaryTable.percent(m.sloAttainment()),
                        m.totalMisses(), m.preemptions(), m.recomputedTokens(), m.reclaims().asked(), SummaryTable.ms(m.reclaims().waitP50Ms()),
                        SummaryTable.ms(m.reclaims().waitP99Ms()), "", "");
            }
            Totals t = Totals.of(report);
            table.row(report.policy().flag(), "all", t.served() + "/" + t.arrived(), t.tokens(), ratio(t.tokens(), report.ceiling().all()), "", "", "",
                    SummaryTable.percent(t.slo()), t.misses(), t.preemptions(), t.recomputed(), t.reclaims(), "", "",
                    report.grants().samples() == 0 ? "not sampled" : report.grants().anyOverGrant() ? report.grants().overGranted() + " samples" : "none",
                    report.ok() ? "held" : "broken");
        }
        DemoReport first = reports.getFirst();
        DemoSettings settings = first.settings();
        StringBuilder out = new StringBuilder();
        out.append(String.format(Locale.ROOT, "%ncomparison: the same trace under %d policies, one after another (%s, %s GPU, tp %d, %d s, "
                        + "seed %d, load %.2f, step %d ms; SLO: TTFT <= %d ms and TPOT <= %d ms)%n",
                reports.size(), settings.trace().name(), settings.device(), settings.tp(), settings.duration().toSeconds(), settings.seed(),
                settings.load(), settings.step().toMillis(), settings.targets().ttft().toMillis(), settings.targets().tpot().toMillis()));
        out.append(first.offered()).append('\n');
        out.append(first.ceiling()).append('\n');
        out.append(table.render());
        out.append('\n').append(placement(reports));
        out.append('\n').append(account(reports));
        out.append('\n').append(WorstWaits.render(reports));
        Optional<DemoReport> arbitrated = find(reports, SharingPolicy.ARBITRATED);
        if (arbitrated.isPresent()) {
            for (SharingPolicy peer : List.of(SharingPolicy.STATIC, SharingPolicy.FIRST_COME)) {
                find(reports, peer).ifPresent(p -> out.append('\n').append(ratios(arbitrated.get(), p)));
            }
            out.append('\n').append(headline(reports, arbitrated.get())).append('\n');
        }
        return out.toString();
    }

    /** How each model's requests lay in pages, and what reclaims got back by turnover and by preempting. */
    private static String placement(List<DemoReport> reports) {
        TextTable table = new TextTable("policy", "model", "holders per page", "fill", "at reclaim", "pages asked", "by turnover", "by preempting",
                "preempted per page");
        for (DemoReport report : reports) {
            for (ModelReport m : report.models()) {
                ModelReport.Placement p = m.placement();
                table.row(report.policy().flag(), m.model().name(), String.format(Locale.ROOT, "%.2f", p.holdersPerPage()),
                        SummaryTable.percent(p.fill()),
                        p.pagesAsked() == 0 ? "-" : String.format(Locale.ROOT, "%.2f", p.holdersAtReclaim()), p.pagesAsked(), p.byTurnover(),
                        p.byPreempting(), Double.isNaN(p.preemptedPerPage()) ? "-" : String.format(Locale.ROOT, "%.2f", p.preemptedPerPage()));
            }
        }
        return "placement: requests per page held (mean over the steps, and at each reclaim), and the pages reclaims got back:\n"
                + table.render();
    }

    /**
     * Where the caches' memory went, per policy: each use's share of the budget over the run and
     * over the time some model waited for memory, with the GiB-seconds; then per model the work
     * of its steps and how long it waited.
     */
    public static String account(List<DemoReport> reports) {
        List<String> header = new ArrayList<>(List.of("policy", "over"));
        for (MemoryAccount.Use use : MemoryAccount.Use.values()) {
            header.add(use.label);
        }
        header.add(2 + 1, "of which thrown away");
        TextTable table = new TextTable(header.toArray(String[]::new));
        for (DemoReport report : reports) {
            MemoryAccount.Totals t = report.account();
            List<Object> run = new ArrayList<>(List.of(report.policy().flag(), String.format(Locale.ROOT, "run, %.1f s", t.seconds())));
            List<Object> waiting = new ArrayList<>(List.of(report.policy().flag(),
                    String.format(Locale.ROOT, "a model waits, %.1f s", t.waitingSeconds())));
            for (MemoryAccount.Use use : MemoryAccount.Use.values()) {
                run.add(String.format(Locale.ROOT, "%s (%,.0f GiB·s)", SummaryTable.percent(t.share(use)), t.gibSeconds(use)));
                waiting.add(String.format(Locale.ROOT, "%s (%,.0f GiB·s)", SummaryTable.percent(t.waitingShare(use)), t.waitingGibSeconds(use)));
                if (use == MemoryAccount.Use.WRITTEN) {
                    run.add(String.format(Locale.ROOT, "%s (%,.0f GiB·s)", SummaryTable.percent(t.thrownShare()), t.thrownByteSeconds() / (1L << 30)));
                    waiting.add("");
                }
            }
            table.row(run.toArray());
            table.row(waiting.toArray());
        }
        TextTable work = new TextTable("policy", "model", "prefilled tokens", "prefilled again", "decoded", "request-steps sat out",
                "waits refused s", "waits held s");
        for (DemoReport report : reports) {
            for (ModelReport m : report.models()) {
                ModelReport.Work w = m.work();
                work.row(report.policy().flag(), m.model().name(), w.prefillFirstTokens(), w.prefillAgainTokens(), m.tokens(), w.satOutRequestSteps(),
                        String.format(Locale.ROOT, "%.1f", w.refusedSeconds()), String.format(Locale.ROOT, "%.1f", w.heldSeconds()));
            }
        }
        return "memory account: each use's share of the caches' memory, sampled every " + DemoRun.SAMPLE_MS
                + " ms, over the run and over the time some model waited for memory:\n" + table.render()
                + "\nwork: tokens prefilled (first time, again after preemption), decoded; time a model waited refused or held by its rules:\n"
                + work.render();
    }

    /** Arbitrated against one peer, per model and in all. */
    private static String ratios(DemoReport arbitrated, DemoReport peer) {
        TextTable table = new TextTable("model", "finished", "tokens", "SLO met", "TTFT p99", "TPOT p99");
        for (int m = 0; m < arbitrated.models().size(); m++) {
            ModelReport a = arbitrated.models().get(m);
            ModelReport p = peer.models().get(m);
            table.row(a.model().name(), ratio(a.served(), p.served()), ratio(a.tokens(), p.tokens()), ratio(a.sloAttainment(), p.sloAttainment()),
                    ratio(a.service().ttftP99Ms(), p.service().ttftP99Ms()), ratio(a.service().tpotP99Ms(), p.service().tpotP99Ms()));
        }
        Totals a = Totals.of(arbitrated);
        Totals p = Totals.of(peer);
        table.row("all", ratio(a.served(), p.served()), ratio(a.tokens(), p.tokens()), ratio(a.slo(), p.slo()), "", "");
        return "arbitrated / " + peer.policy().flag() + " (above 1 is better for finished, tokens and SLO met; below 1 is better for latencies):\n"
                + table.render();
    }

    /** The measured headline: arbitrated's total tokens and SLO attainment against each peer's. */
    static String headline(List<DemoReport> reports, DemoReport arbitrated) {
        Totals a = Totals.of(arbitrated);
        StringBuilder line = new StringBuilder(String.format(Locale.ROOT, "measured: arbitrated served %,d tokens, SLO met by %s of requests",
                a.tokens(), SummaryTable.percent(a.slo())));
        for (DemoReport peer : reports) {
            if (peer == arbitrated) {
                continue;
            }
            Totals p = Totals.of(peer);
            line.append(String.format(Locale.ROOT, "; %s %,d tokens (%sx), SLO %s (%sx)", peer.policy().flag(), p.tokens(),
                    ratio(a.tokens(), p.tokens()), SummaryTable.percent(p.slo()), ratio(a.slo(), p.slo())));
        }
        long ceiling = arbitrated.ceiling().all();
        line.append(String.format(Locale.ROOT, "; the most any policy can decode %,d tokens (arbitrated %s of it", ceiling,
                ratio(a.tokens(), ceiling)));
        for (DemoReport peer : reports) {
            if (peer != arbitrated) {
                line.append(String.format(Locale.ROOT, ", %s %s", peer.policy().flag(), ratio(Totals.of(peer).tokens(), ceiling)));
            }
        }
        return line.append(')').toString();
    }

    private static Optional<DemoReport> find(List<DemoReport> reports, SharingPolicy policy) {
        return reports.stream().filter(r -> r.policy() == policy).findFirst();
    }

    static String ratio(double a, double b) {
        if (Double.isNaN(a) || Double.isNaN(b) || b == 0) {
            return "-";
        }
        return String.format(Locale.ROOT, "%.2f", a / b);
    }
}
