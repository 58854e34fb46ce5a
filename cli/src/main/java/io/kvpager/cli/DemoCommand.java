package io.kvpager.cli;

import io.kvpager.KvFormat;
import io.kvpager.cache.KvCacheOptions;
import io.kvpager.cli.demo.DemoReport;
import io.kvpager.cli.demo.DemoRun;
import io.kvpager.cli.demo.DemoSettings;
import io.kvpager.cli.demo.ModelProfile;
import io.kvpager.cli.demo.SummaryTable;
import io.kvpager.cli.metrics.MetricsEndpoint;
import java.io.PrintWriter;
import java.nio.file.Path;
import java.time.Duration;
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
 * serving trace; progress while it runs, then a summary table and a chart of memory per model.
 * Ctrl-C ends the run early and still prints the summary of what was served; a chart that cannot
 * be drawn (a server without fonts) is a warning, not a failure.
 */
@Command(name = "demo", mixinStandardHelpOptions = true,
        description = "Serve a seeded, bursty trace for several models sharing one GPU, each through its own elastic KV cache "
                + "(coordinator and tp local workers), then print a summary and write a chart of GPU memory per model over time.")
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
            description = "Share of the GPU's memory the caches may take between them, 1 to 100 (default: 90 on cuda, where "
                    + "the CUDA context and the attention buffers need the rest; 100 on sim).")
    Integer gpuMemoryPercent;

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
            description = "Where the chart of memory per model is written (default: ${DEFAULT-VALUE}).")
    Path out;

    @Mixin
    MetricsPortOption metricsPort;

    @Override
    @SuppressWarnings("try") // Ctrl-C handling ends with the run, before the chart, earlier than its try block
    public Integer call() throws Exception {
        DemoSettings settings = settings();
        PrintWriter stdout = spec.commandLine().getOut();
        PrintWriter stderr = spec.commandLine().getErr();
        boolean terminal = System.console() != null && System.console().isTerminal();
        DemoReport report;
        DemoRun demo;
        try (Node node = root.node(metricsPort.on());
                DemoRun run = DemoRun.deploy(node.vertx(), settings);
                Interruption interruption = root.interruption(run::requestStop);
                MetricsEndpoint metrics = !metricsPort.on() ? null
                        : MetricsEndpoint.listen(node.vertx(), metricsPort.port, run.caches())) {
            demo = run;
            if (metrics != null) {
                run.meter(metrics.registry());
                stderr.println("metrics at http://localhost:" + metrics.port() + "/metrics, health at /health");
            }
            try {
                report = run.run(stderr, terminal);
                // The summary first: whatever happens to the chart, the run's result is out.
                stdout.print(SummaryTable.render(report));
                for (ModelProfile model : settings.models()) {
                    stdout.printf("%s: KV %s, %,d KV tokens per GiB (%d-token blocks of %,d bytes per rank)%n", model.name(),
                            model.kv().optionName(), model.tokensPerGiB(settings.tp()), model.blockTokens(),
                            model.blockBytes(settings.tp()));
                }
                stdout.flush();
                for (String violation : report.violations()) {
                    stderr.println("kvpager demo: invariant broken: " + violation);
                }
                stderr.flush();
            } finally {
                interruption.close();
                // also when the run fails late, what attention measured is worth seeing
                run.attentionSummary().forEach(stdout::println);
            }
        }
        writeChart(demo, stdout, stderr);
        return report.ok() ? 0 : 1;
    }

    /**
     * Whether Java2D has no font to draw text with: on a server without fontconfig or fonts, listing
     * them fails or finds none. Asked of Java2D itself rather than read from the chart's error.
     */
    private static boolean fontsMissing() {
        try {
            return java.awt.GraphicsEnvironment.getLocalGraphicsEnvironment().getAvailableFontFamilyNames().length == 0;
        } catch (Exception | Error e) {
            return true;
        }
    }

    /** Draws the chart; one that cannot be drawn is a warning that says how to fix it, not a failure of the run. */
    private void writeChart(DemoRun run, PrintWriter stdout, PrintWriter stderr) {
        try {
            run.writeChart();
            stdout.println("chart: " + out.toAbsolutePath());
            stdout.flush();
        } catch (Exception | Error e) {
            String why = OneLine.of(e);
            String fix = fontsMissing()
                    ? "this machine has no fonts for Java to draw text with; install fontconfig and one font (Debian, Ubuntu: "
                            + "apt-get install fontconfig fonts-dejavu-core; RHEL: dnf install fontconfig dejavu-sans-fonts) and run again"
                    : "check that " + out.toAbsolutePath() + " can be written, or pass --out elsewhere";
            stderr.println("kvpager demo: warning: the chart was not drawn (" + why + "): " + fix
                    + "; the summary above is complete");
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
            return new DemoSettings(profiles, tp, seed, duration, step, capacity, device, gpu, limitBytes, out,
                    idleHandlePages, gpuMemoryPercent);
        } catch (IllegalArgumentException e) {
            throw new ParameterException(spec.commandLine(), e.getMessage(), e);
        }
    }
}
