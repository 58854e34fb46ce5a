package io.kvpager.cli;

import io.kvpager.cli.text.ByteSize;
import io.kvpager.KvFormat;
import io.kvpager.cache.KvCacheOptions;
import io.kvpager.cli.demo.DemoReport;
import io.kvpager.cli.demo.DemoRun;
import io.kvpager.cli.demo.ComparisonTable;
import io.kvpager.cli.demo.DemoSettings;
import io.kvpager.cli.demo.ModelProfile;
import io.kvpager.cli.demo.ServiceTargets;
import io.kvpager.cli.demo.SharingPolicy;
import io.kvpager.cli.demo.WeightFormat;
import io.kvpager.cli.demo.SummaryTable;
import io.kvpager.cli.demo.TraceChoice;
import io.kvpager.cli.demo.TracePreset;
import io.kvpager.cli.demo.TraceReplay;
import io.kvpager.cli.metrics.MetricsEndpoint;
import java.io.IOException;
import java.io.PrintWriter;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.ParentCommand;
import picocli.CommandLine.Spec;

/**
 * {@code kvpager demo}: several models share one GPU through elastic caches, driven by a bursty
 * serving trace, under one sharing policy or, with {@code --compare}, under each in turn; progress
 * while it runs, then a summary table per run, the comparison, and a chart of memory per model
 * (a panel per policy). Ctrl-C ends the run early and still prints the summary of what was served
 * (and skips the policies not yet run); a chart that cannot be drawn (a server without fonts) is a
 * warning, not a failure.
 */
@Command(name = "demo", mixinStandardHelpOptions = true,
        description = "Serve a seeded, bursty trace (or a recorded one) for several models sharing one GPU, each through its own "
                + "elastic KV cache (coordinator and tp local workers), then print a summary and write a chart of GPU memory per model "
                + "over time. --compare serves the same trace under each sharing policy, one after another, and compares them.")
final class DemoCommand implements Callable<Integer> {

    @Spec
    CommandSpec spec;

    @ParentCommand
    KvPager root;

    @Option(names = "--duration", paramLabel = "TIME", defaultValue = "20s", converter = DurationConverter.class,
            description = "How long requests arrive and are served (default: ${DEFAULT-VALUE}).")
    Duration duration;

    @Option(names = "--models", paramLabel = "MODEL", split = ",", defaultValue = "7b,13b,70b",
            description = "Models sharing the GPU, from the presets 7b, 13b, 70b (default: ${DEFAULT-VALUE}).")
    List<String> models;

    @Option(names = "--kv-dtype", paramLabel = "TYPE", defaultValue = "bf16",
            description = "How the caches store K and V: bf16 or fp8 (e4m3, a scale per token and KV head: about twice "
                    + "the tokens per GiB) (default: ${DEFAULT-VALUE}).")
    String kvDtype;

    @Option(names = "--tp", paramLabel = "N", defaultValue = "2", description = "Tensor-parallel ranks per model (default: ${DEFAULT-VALUE}).")
    int tp;

    @Option(names = "--idle-handle-pages", paramLabel = "N", defaultValue = "" + KvCacheOptions.DEFAULT_IDLE_HANDLE_PAGES,
            description = "Page ids' worth of unmapped handles each rank may keep while its pages churn, counted in the GPU's budget;"
                    + " 0 keeps none (default: ${DEFAULT-VALUE}).")
    int idleHandlePages;

    @Option(names = "--seed", paramLabel = "S", defaultValue = "42", description = "Seed of the serving trace (default: ${DEFAULT-VALUE}).")
    long seed;

    @Option(names = "--device", paramLabel = "KIND", defaultValue = "sim",
            description = "sim (a simulated H200 with its measured latencies) or cuda (default: ${DEFAULT-VALUE}).")
    String device;

    @Option(names = "--gpu", paramLabel = "N", defaultValue = "0", description = "GPU the models share (default: ${DEFAULT-VALUE}).")
    int gpu;

    @Option(names = "--gpu-memory-percent", paramLabel = "P",
            description = "Share of the GPU's memory the models may take, weights and caches together, 1 to 100 (default: 90, "
                    + "the CUDA context and the attention buffers need the rest).")
    Integer gpuMemoryPercent;

    @Option(names = "--weights", paramLabel = "FORMAT", defaultValue = "fp8",
            description = "How the models hold their weights on the GPU: fp8 (1 byte per parameter), bf16 (2) or none; the weights "
                    + "take memory the caches cannot have and every step reads them (default: ${DEFAULT-VALUE}).")
    String weights;

    @Option(names = "--capacity", paramLabel = "SIZE", defaultValue = "141GiB", converter = ByteSizeConverter.class,
            description = "Memory of the shared GPU; the trace is sized to it (default: 141GiB, an H200).")
    long capacity;

    @Option(names = "--step", paramLabel = "TIME", defaultValue = "20ms", converter = DurationConverter.class,
            description = "Length of one decode step (default: ${DEFAULT-VALUE}).")
    Duration step;

    @Option(names = "--limit", paramLabel = "MODEL=SIZE", mapFallbackValue = "",
            description = "Memory limit per rank for one model, e.g. --limit 70b=40GiB; repeatable.")
    Map<String, String> limits = new LinkedHashMap<>();

    @Option(names = "--out", paramLabel = "FILE", defaultValue = "kvpager-demo.png",
            description = "Where the chart of memory per model is written: a PNG, or an SVG when FILE ends in .svg; where Java "
                    + "cannot draw a PNG (no fonts), an SVG beside it (default: ${DEFAULT-VALUE}).")
    Path out;

    @Option(names = "--compare",
            description = "Serve the same trace under static, first-come and arbitrated, one after another with the same settings, "
                    + "then print a comparison table.")
    boolean compare;

    @Option(names = "--policy", paramLabel = "POLICY", defaultValue = "arbitrated",
            description = "How the models share the GPU: static (each limited to budget / models), first-come (elastic, no "
                    + "guarantee) or arbitrated (guaranteed equal shares, borrowing, reclaim) (default: ${DEFAULT-VALUE}).")
    String policy;

    @Option(names = "--trace-preset", paramLabel = "PRESET",
            description = "Shape of the seeded trace: rotating (one model bursts at a time), overlapping (bursts overlap a third), "
                    + "steady-bursts (a steady base plus bursts at independent times) (default: steady-bursts).")
    String tracePreset;

    @Option(names = "--trace", paramLabel = "FILE|azure-conv",
            description = "Replay a recorded trace instead: a CSV of TIMESTAMP,ContextTokens,GeneratedTokens (.gz too), or azure-conv, "
                    + "the bundled Azure LLM inference trace 2023 (conversation); one time slice per model, compressed into "
                    + "--duration and rate-scaled to the GPU.")
    String trace;

    @Option(names = "--load", paramLabel = "X", defaultValue = DemoSettings.DEFAULT_LOAD,
            description = "The mean KV the trace offers, in pages at the steps the GPU takes under it, as a share of the caches' memory: "
                    + "a preset is sized to it, a replayed trace thinned to it; above 0, at most 4 (default: ${DEFAULT-VALUE}: below "
                    + "what the GPU holds, each model's bursts above its share).")
    double load;

    @Option(names = "--attention-bandwidth", paramLabel = "TB/S", defaultValue = DemoSettings.DEFAULT_ATTENTION_TBPS,
            description = "How fast the GPU's decode attention reads KV, in TB/s, with 20 us a kernel launch: the trace's rate is "
                    + "scaled to it, and the simulated device's attention runs at it; above 0, at most 100 (default: ${DEFAULT-VALUE}, "
                    + "from the H200's steps; two H100s' fit 3.0 to 3.9). On --device cuda the run prints the figure its steps fit "
                    + "(docs/sharing.md).")
    double attentionTbps;

    @Option(names = "--slo-ttft", paramLabel = "TIME", defaultValue = ServiceTargets.DEFAULT_TTFT, converter = DurationConverter.class,
            description = "Service target for the time to first token, arrival to first decode step (default: ${DEFAULT-VALUE}).")
    Duration sloTtft;

    @Option(names = "--slo-tpot", paramLabel = "TIME", defaultValue = ServiceTargets.DEFAULT_TPOT, converter = DurationConverter.class,
            description = "Service target for the time per output token after the first (default: ${DEFAULT-VALUE}).")
    Duration sloTpot;

    @Mixin
    MetricsPortOption metricsPort;

    @Override
    @SuppressWarnings("try") // Ctrl-C handling ends with the run, before the chart, earlier than its try block
    public Integer call() throws Exception {
        DemoSettings settings = settings();
        List<SharingPolicy> policies = compare
                ? List.of(SharingPolicy.STATIC, SharingPolicy.FIRST_COME, SharingPolicy.ARBITRATED)
                : List.of(settings.policy());
        PrintWriter stdout = spec.commandLine().getOut();
        PrintWriter stderr = spec.commandLine().getErr();
        boolean terminal = System.console() != null && System.console().isTerminal();
        List<DemoReport> reports = new ArrayList<>();
        List<DemoRun> runs = new ArrayList<>();
        try (Node node = root.node(metricsPort.on())) {
            for (SharingPolicy policy : policies) {
                DemoReport report = runOne(node, settings.withPolicy(policy), stdout, stderr, terminal, runs);
                reports.add(report);
                if (report.stoppedEarly()) {
                    break;
                }
            }
        }
        if (compare) {
            stdout.print(ComparisonTable.render(reports));
            stdout.flush();
        }
        writeChart(runs, stdout, stderr);
        return reports.stream().allMatch(DemoReport::ok) ? 0 : 1;
    }

    @SuppressWarnings("try") // the interruption is closed by the block, never read
    private DemoReport runOne(Node node, DemoSettings settings, PrintWriter stdout, PrintWriter stderr, boolean terminal,
            List<DemoRun> runs) {
        if (compare) {
            stderr.println("kvpager demo: policy " + settings.policy().flag() + " (" + settings.policy().meaning() + ")");
            stderr.flush();
        }
        try (DemoRun run = DemoRun.deploy(node.vertx(), settings);
                Interruption interruption = root.interruption(run::requestStop);
                MetricsEndpoint metrics = !metricsPort.on() ? null
                        : MetricsEndpoint.listen(node.vertx(), metricsPort.port, run.caches())) {
            runs.add(run);
            if (metrics != null) {
                run.meter(metrics.registry());
                stderr.println("metrics at http://localhost:" + metrics.port() + "/metrics, health at /health");
            }
            try {
                DemoReport report = run.run(stderr, terminal);
                // The summary first: whatever happens to the chart, the run's result is out.
                stdout.print(SummaryTable.render(report));
                if (!compare) {
                    stdout.print(ComparisonTable.account(List.of(report)));
                }
                for (ModelProfile model : settings.models()) {
                    stdout.printf("%s: KV %s, %,d KV tokens per GiB (%d-token blocks of %,d bytes per rank)%n", model.name(),
                            model.kv().optionName(), model.tokensPerGiB(settings.tp()), model.blockTokens(),
                            model.blockBytes(settings.tp()));
                }
                stdout.flush();
                for (String violation : report.violations()) {
                    stderr.println("kvpager demo: " + (compare ? settings.policy().flag() + ": " : "") + "invariant broken: " + violation);
                }
                stderr.flush();
                return report;
            } finally {
                // also when the run fails late, what attention measured is worth seeing
                run.attentionSummary().forEach(stdout::println);
                run.bandwidthWarning().ifPresent(w -> stderr.println("kvpager demo: warning: " + w));
                stderr.flush();
                stdout.println();
                stdout.flush();
            }
        }
    }

    /**
     * Draws the chart; one that cannot be drawn is a warning that says how to fix it, not a failure of
     * the run. A PNG that Java2D cannot draw here (no fonts, or a runtime without {@code java.desktop})
     * is written as an SVG beside it instead, which needs neither.
     */
    private void writeChart(List<DemoRun> runs, PrintWriter stdout, PrintWriter stderr) {
        if (runs.isEmpty()) {
            return;
        }
        try {
            DemoRun.writeChart(out, runs);
            stdout.println("chart: " + out.toAbsolutePath());
            stdout.flush();
            return;
        } catch (Exception | Error e) {
            String why = OneLine.of(e);
            // an IOException is the file's; anything else is Java2D failing to draw (no fonts, no java.desktop)
            boolean cannotDraw = !(e instanceof IOException);
            String fix = ModuleLayer.boot().findModule("java.desktop").isEmpty()
                    ? "this Java runtime has no java.desktop module, which draws PNG charts; run on a full JDK or JRE for a PNG"
                    : cannotDraw ? "Java could not draw a PNG here, most often for want of fonts; for a PNG, install fontconfig and one font "
                            + "(Debian, Ubuntu: apt-get install fontconfig fonts-dejavu-core; RHEL: dnf install fontconfig dejavu-sans-fonts)"
                    : "check that " + out.toAbsolutePath() + " can be written, or pass --out elsewhere";
            if (cannotDraw && !DemoRun.isSvg(out)) {
                Path svg = DemoRun.svgBeside(out);
                try {
                    DemoRun.writeChart(svg, runs);
                    stdout.println("chart: " + svg.toAbsolutePath());
                    stdout.flush();
                    stderr.println("kvpager demo: the chart is an SVG, not the PNG asked for (" + why + "): " + fix
                            + "; an SVG needs neither (--out FILE.svg asks for one)");
                    stderr.flush();
                    return;
                } catch (IOException | RuntimeException svgFailed) {
                    why += "; the SVG instead: " + OneLine.of(svgFailed);
                }
            }
            stderr.println("kvpager demo: warning: the chart was not drawn (" + why + "): " + fix + "; the summary above is complete");
            stderr.flush();
        }
    }

    private DemoSettings settings() {
        try {
            DeviceOptions.requireAvailable(device);
            KvFormat format = KvFormat.parse(kvDtype);
            List<ModelProfile> profiles = models.stream().map(ModelProfile::preset).map(m -> m.withKv(format)).toList();
            Map<String, Long> limitBytes = new LinkedHashMap<>();
            limits.forEach((model, size) -> {
                if (size.isEmpty()) {
                    throw new IllegalArgumentException("--limit " + model + " needs a size: --limit " + model + "=40GiB");
                }
                limitBytes.put(ModelProfile.preset(model).name(), ByteSize.parse(size));
            });
            metricsPort.validate();
            WritableFile.check("--out", out);
            SharingPolicy sharing = SharingPolicy.of(policy);
            if (compare && spec.commandLine().getParseResult().hasMatchedOption("--policy")) {
                throw new IllegalArgumentException("--compare runs every policy; leave out --policy " + policy);
            }
            if (trace != null && tracePreset != null) {
                throw new IllegalArgumentException("--trace and --trace-preset exclude each other: give one");
            }
            TraceChoice traceChoice = trace != null ? TraceChoice.of(TraceReplay.load(trace))
                    : TraceChoice.of(tracePreset != null ? TracePreset.of(tracePreset) : TraceChoice.DEFAULT_PRESET);
            return new DemoSettings(profiles, tp, seed, duration, step, capacity, device, gpu, limitBytes, idleHandlePages,
                    gpuMemoryPercent, sharing, traceChoice, new ServiceTargets(sloTtft, sloTpot),
                    WeightFormat.of(weights), load, attentionTbps * 1e12);
        } catch (IllegalArgumentException e) {
            throw new ParameterException(spec.commandLine(), e.getMessage(), e);
        }
    }
}
