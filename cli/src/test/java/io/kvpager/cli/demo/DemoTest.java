package io.kvpager.cli.demo;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.kvpager.cli.KvPager;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import io.vertx.core.Promise;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;

/**
 * The main job, short and small, through the picocli entry point: it checks its own invariants
 * (every model served, no failed call, nothing mapped after the trim, no handle left on the
 * simulated GPU after close, the chart written) and exits non-zero when one breaks.
 */
class DemoTest {

    @TempDir
    Path dir;

    private record Run(int exitCode, String out, String err) {
    }

    private static Run demo(String... args) {
        return demo(new KvPager(), new StringWriter(), args);
    }

    private static Run demo(KvPager root, StringWriter err, String... args) {
        StringWriter out = new StringWriter();
        CommandLine commandLine = KvPager.commandLine(root);
        commandLine.setOut(new PrintWriter(out, true));
        commandLine.setErr(new PrintWriter(err, true));
        String[] all = new String[args.length + 1];
        all[0] = "demo";
        System.arraycopy(args, 0, all, 1, args.length);
        return new Run(commandLine.execute(all), out.toString(), err.toString());
    }

    @Test
    void aShortRunServesEveryModelAndKeepsItsInvariants() {
        Path chart = dir.resolve("memory.png");
        Run run = demo("--duration", "3s", "--models", "7b,70b", "--capacity", "8GiB", "--weights", "none", "--seed", "3", "--out", chart.toString());
        assertThat(run.exitCode()).as(run.err()).isZero();
        assertThat(run.err()).doesNotContain("invariant broken");
        assertThat(run.out())
                .contains("2 models sharing sim GPU 0 (8.0 GiB), tp 2 each, 3 s, seed 3, load 0.90, policy arbitrated")
                .contains("trace: preset steady-bursts")
                .contains("service targets: time to first token <= 1000 ms and time per output token <= 100 ms")
                .containsPattern("\\n7b\\s+[1-9]\\d*/\\d+\\s")
                .containsPattern("\\n70b\\s+[1-9]\\d*/\\d+\\s")
                .doesNotContain("would have refused")
                .contains("no sample over-granted")
                .contains("decode steps modelled on the simulated GPU")
                .contains("weights: none, 0 B on the GPU")
                .contains("trace of seed 3: ")
                .contains("invariants held: every model served")
                .contains("chart: " + chart.toAbsolutePath());
        assertThat(run.out().indexOf("invariants held")).isLessThan(run.out().indexOf("chart: "));
        assertThat(chart).isNotEmptyFile();
    }

    /** --compare: the same trace under every policy, each run keeping its invariants, then one comparison. */
    @Test
    void aShortComparisonRunsEveryPolicyAndKeepsEachRunsInvariants() {
        Path chart = dir.resolve("compare.png");
        Run run = demo("--compare", "--duration", "2s", "--models", "7b,70b", "--capacity", "8GiB", "--weights", "none", "--seed", "3",
                "--trace-preset", "overlapping", "--load", "1.2", "--out", chart.toString());
        assertThat(run.exitCode()).as(run.err()).isZero();
        assertThat(run.err()).doesNotContain("invariant broken");
        String out = run.out();
        for (SharingPolicy policy : SharingPolicy.values()) {
            assertThat(out).contains("tp 2 each, 2 s, seed 3, load 1.20, policy " + policy.flag() + ": ");
            for (String model : new String[] {"7b", "70b", "all"}) {
                assertThat(out).containsPattern("\\n" + policy.flag() + "\\s+" + model + "\\s+\\d+/\\d+\\s+\\d+\\s+(0\\.\\d\\d|1\\.00)\\s");
            }
            assertThat(out).containsPattern("\\n" + policy.flag() + "\\s+all\\s.*\\snone\\s+held\\n");
        }
        assertThat(out).contains("comparison: the same trace under 3 policies, one after another (overlapping, sim GPU, tp 2, 2 s, seed 3, load 1.20")
                .containsPattern("offered KV in pages \\(mean over the run, each request served at once, steps of [\\d.]+ ms, KV read at 4\\.3 TB/s\\): 7b [\\d.]+x its equal share, 70b [\\d.]+x;"
                        + " all [\\d.]+x the caches' memory\\n")
                .containsPattern("the most any policy can decode before the end \\(each request admitted in the step it arrives in, never waiting, "
                        + "a token per 20 ms step after its prefill\\): 7b [\\d,]+ tokens, 70b [\\d,]+; all [\\d,]+\\n")
                .contains("arbitrated / static (").contains("arbitrated / first-come (")
                .containsPattern("measured: arbitrated served [\\d,]+ tokens, SLO met by [\\d.]+% of requests; static [\\d,]+ tokens \\([\\d.-]+x\\)")
                .containsPattern("; the most any policy can decode [\\d,]+ tokens \\(arbitrated [\\d.]+ of it, static [\\d.]+, first-come [\\d.]+\\)\\n")
                .contains("chart: " + chart.toAbsolutePath());
        assertThat(out.indexOf("comparison:")).isGreaterThan(out.lastIndexOf("invariants held"));
        assertThat(chart).isNotEmptyFile();
        // each policy's worst-wait row is the request its TTFT p99 is: its own column holds that p99
        String worst = out.substring(out.indexOf("worst waits: "), out.indexOf("arbitrated / static ("));
        List<String> policies = List.of("static", "first-come", "arbitrated");
        for (String model : new String[] {"7b", "70b"}) {
            for (String policy : policies) {
                Matcher p99 = Pattern.compile("\\n" + policy + "\\s+" + model + "\\s+\\d+/\\d+\\s+\\d+\\s+\\S+\\s+\\S+\\s+(\\d+)\\.0\\s").matcher(out);
                if (!p99.find()) {
                    continue; // no request of this model got a first token under this policy: no p99, no row
                }
                Matcher row = Pattern.compile("\\n" + model + "\\s+" + policy + "\\s+#\\d+\\s+[\\d.]+\\s+[\\d,]+((\\s+(\\d+|none|-)){3})(\\s+\\d+){2}\\n")
                        .matcher(worst);
                assertThat(row.find()).as("%s %s in%n%s", model, policy, worst).isTrue();
                assertThat(row.group(1).strip().split("\\s+")[policies.indexOf(policy)]).isEqualTo(p99.group(1));
            }
        }
    }

    /** --out FILE.svg: the chart written as text, which needs no fonts. */
    @Test
    void anOutEndingInSvgGetsAnSvgChart() throws Exception {
        Path chart = dir.resolve("memory.svg");
        Run run = demo("--duration", "1s", "--models", "7b,70b", "--capacity", "8GiB", "--weights", "none", "--out", chart.toString());
        assertThat(run.exitCode()).as(run.err()).isZero();
        assertThat(run.out()).contains("chart: " + chart.toAbsolutePath());
        assertThat(Files.readString(chart)).startsWith("<svg ").contains(">7b</text>", ">70b</text>", "<polyline ").endsWith("</svg>\n");
        assertThat(dir.resolve("memory.png")).doesNotExist();
    }

    @Test
    void theBundledTraceIsReplayedAndSaysHow() {
        Run run = demo("--trace", "azure-conv", "--policy", "first-come", "--duration", "6s", "--models", "7b,70b", "--capacity", "8GiB", "--weights", "none",
                "--out", dir.resolve("azure.png").toString());
        assertThat(run.exitCode()).as(run.err()).isZero();
        assertThat(run.out()).contains("policy first-come")
                .contains("trace: azure-conv (Azure LLM inference trace 2023, conversation service): 19,366 requests over 58.4 min; "
                        + "each model replays one of 2 consecutive slices, compressed 291.8x into 6 s")
                .contains("invariants held");
    }

    @Test
    void anOutThatCannotBeWrittenFailsBeforeAnythingRuns() throws Exception {
        Path notADirectory = Files.writeString(dir.resolve("plain-file"), "x");
        Run run = demo("--duration", "60s", "--out", notADirectory.resolve("memory.png").toString());
        assertThat(run.exitCode()).isEqualTo(2);
        assertThat(run.err()).startsWith("kvpager demo: --out " + notADirectory.resolve("memory.png") + " cannot be written");
        assertThat(run.out()).isEmpty();
    }

    /**
     * Ctrl-C (here the command line's stop signal, which the JVM's shutdown hook also fires) ends
     * the run early with its summary; a chart that cannot be drawn then is a warning, exit 0.
     */
    @Test
    void aRunStoppedEarlyPrintsWhatItHasAndSurvivesAChartThatCannotBeDrawn() throws Exception {
        Path folder = dir.resolve("charts");
        Promise<Void> stop = Promise.promise();
        StringWriter err = new StringWriter();
        CompletableFuture<Run> running = CompletableFuture.supplyAsync(() -> demo(new KvPager(stop.future()), err,
                "--duration", "120s", "--models", "7b,70b", "--capacity", "8GiB", "--weights", "none", "--out", folder.resolve("memory.png").toString()));
        // the progress line (every 2 s off a terminal) shows tokens served: the engines are running
        await().atMost(Duration.ofSeconds(60)).until(() -> err.toString().matches("(?s).*[1-9][\\d,]* tokens.*") || running.isDone());
        Files.delete(folder);
        Files.writeString(folder, "a file where the chart's folder was");
        stop.complete();
        Run run = running.get(60, TimeUnit.SECONDS);

        assertThat(run.exitCode()).as(run.err()).isZero();
        assertThat(run.out()).containsPattern("stopped after \\d+\\.\\d s of 120 s")
                .containsPattern("\\n7b\\s+\\d+/\\d+\\s+\\d+\\s")
                .contains("invariants held").doesNotContain("chart: ");
        assertThat(run.err()).contains("kvpager demo: warning: the chart was not drawn (")
                .contains("the summary above is complete");
    }

    @Test
    void aModelThatCannotBeServedBreaksAnInvariantAndTheExitCode() {
        Run run = demo("--duration", "1s", "--models", "7b,70b", "--capacity", "8GiB", "--weights", "none", "--limit", "70b=0",
                "--out", dir.resolve("starved.png").toString());
        assertThat(run.exitCode()).isEqualTo(1);
        assertThat(run.err()).contains("kvpager demo: invariant broken: model 70b served no request");
        assertThat(run.out()).containsPattern("misses of 70b: LIMIT \\d+")
                .contains("  LIMIT: the model's own --limit is reached")
                .contains("invariants broken: ");
    }

    /** By default the models hold FP8 weights: the caches share what the weights leave of the 90 %, and every step reads them. */
    @Test
    void theWeightsTakeTheirMemoryFromTheCachesAndEveryStepReadsThem() {
        Run run = demo("--duration", "2s", "--models", "7b", "--tp", "1", "--capacity", "16GiB", "--seed", "3",
                "--out", dir.resolve("weights.png").toString());
        assertThat(run.exitCode()).as(run.err()).isZero();
        // 6.738 GB of 17.18 GB is 40 %: the caches get 90 - 40 = 50 % of the GPU, 8.0 GiB
        assertThat(run.out()).contains("weights: fp8, 6.3 GiB on the GPU, read by every step")
                .containsPattern("7b\\s+\\d+ steps .* ms/step \\(weights 1\\.48\\d\\)")
                .contains("invariants held");
    }

    @Test
    void weightsThatLeaveTheCachesNothingAreRefusedBeforeAnythingRuns() {
        Run run = demo("--duration", "2s", "--models", "7b,70b", "--capacity", "8GiB", "--out", dir.resolve("none.png").toString());
        assertThat(run.exitCode()).isEqualTo(2);
        // 77.3 GB of 8.6 GB: only leaving weights or models out helps
        assertThat(run.err()).contains("the weights of [7b, 70b] as fp8 take 900 % of the GPU's")
                .contains("use --weights none, fewer --models (see").doesNotContain("larger --gpu-memory-percent");
        assertThat(dir.resolve("none.png")).doesNotExist();
        // as bf16, 79 % of the GPU: a larger share would help too
        Run bf16 = demo("--duration", "2s", "--models", "7b", "--tp", "1", "--capacity", "16GiB", "--weights", "bf16",
                "--gpu-memory-percent", "79", "--out", dir.resolve("bf16.png").toString());
        assertThat(bf16.exitCode()).isEqualTo(2);
        assertThat(bf16.err()).contains("as bf16 take 79 %")
                .contains("use --weights fp8 or none, fewer --models or a larger --gpu-memory-percent");
    }

    @Test
    void anUnknownWeightFormatIsNamedWithTheChoices() {
        Run run = demo("--weights", "int4", "--out", dir.resolve("int4.png").toString());
        assertThat(run.exitCode()).isEqualTo(2);
        assertThat(run.err()).contains("no weight format 'int4'; formats: fp8, bf16, none");
    }
}
