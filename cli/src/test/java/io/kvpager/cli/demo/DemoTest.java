package io.kvpager.cli.demo;

import static org.assertj.core.api.Assertions.assertThat;

import io.kvpager.cli.KvPager;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Path;
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
        StringWriter out = new StringWriter();
        StringWriter err = new StringWriter();
        CommandLine commandLine = KvPager.commandLine(new KvPager());
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
        Run run = demo("--duration", "3s", "--models", "7b,70b", "--capacity", "8GiB", "--seed", "3", "--out", chart.toString());
        assertThat(run.exitCode()).as(run.err()).isZero();
        assertThat(run.err()).doesNotContain("invariant broken");
        assertThat(run.out())
                .contains("2 models sharing sim GPU 0 (8.0 GiB), tp 2 each, 3 s, seed 3")
                .containsPattern("\\n7b\\s+[1-9]\\d*/\\d+\\s")
                .containsPattern("\\n70b\\s+[1-9]\\d*/\\d+\\s")
                .contains("a static split (4.0 GiB per model) would have refused at least")
                .contains("chart: " + chart.toAbsolutePath());
        assertThat(chart).isNotEmptyFile();
    }

    @Test
    void aModelThatCannotBeServedBreaksAnInvariantAndTheExitCode() {
        Run run = demo("--duration", "1s", "--models", "7b,70b", "--capacity", "8GiB", "--limit", "70b=0",
                "--out", dir.resolve("starved.png").toString());
        assertThat(run.exitCode()).isEqualTo(1);
        assertThat(run.err()).contains("kvpager demo: invariant broken: model 70b served no request");
        assertThat(run.out()).containsPattern("misses of 70b: LIMIT \\d+");
    }
}
