package io.kvpager.cli;

import static org.assertj.core.api.Assertions.assertThat;

import io.kvpager.Allocation;
import io.kvpager.cache.KvCache;
import io.kvpager.cli.status.InstanceDirectory;
import io.vertx.core.Vertx;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import picocli.CommandLine;

/** {@code status} and {@code limit} against caches running in the same Vert.x, through the picocli entry point. */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class StatusAndLimitTest {

    private Vertx vertx;
    private KvCache cache;

    @BeforeAll
    void deploy() throws Exception {
        vertx = Vertx.vertx();
        cache = SmallCache.deploy(vertx, "status-test");
        new InstanceDirectory(vertx).register("status-test").await(5, TimeUnit.SECONDS);
        Allocation allocation = cache.alloc(40).await(10, TimeUnit.SECONDS);
        assertThat(allocation.isMiss()).isFalse();
    }

    @AfterAll
    void close() throws Exception {
        cache.close().await(30, TimeUnit.SECONDS);
        vertx.close().await(30, TimeUnit.SECONDS);
    }

    private CommandLineTest.Run run(String... args) {
        StringWriter out = new StringWriter();
        StringWriter err = new StringWriter();
        CommandLine commandLine = KvPager.commandLine(new KvPager(vertx));
        commandLine.setOut(new PrintWriter(out, true));
        commandLine.setErr(new PrintWriter(err, true));
        int code = commandLine.execute(args);
        return new CommandLineTest.Run(code, out.toString(), err.toString());
    }

    @Test
    void statusShowsEveryRegisteredInstanceWithItsRanks() {
        CommandLineTest.Run run = run("status");
        assertThat(run.exitCode()).as(run.err()).isZero();
        assertThat(run.out()).containsPattern("status-test\\s+ready\\s+2/2")
                .containsPattern("status-test\\s+pp0/tp0\\s+up")
                .containsPattern("status-test\\s+pp0/tp1\\s+up")
                .contains("used blocks");
    }

    @Test
    void statusOfAnInstanceThatIsNotThereSaysSoAndFails() {
        CommandLineTest.Run run = run("status", "status-test", "nobody");
        assertThat(run.exitCode()).isEqualTo(StatusCommand.UNREACHABLE);
        assertThat(run.out()).containsPattern("status-test\\s+ready").containsPattern("nobody\\s+unreachable")
                .contains("no coordinator for instance nobody at kvpager.nobody.coordinator");
    }

    @Test
    void limitPrintsEachOutcome() {
        CommandLineTest.Run applied = run("limit", "status-test", "1GiB", "--revision", "10");
        assertThat(applied.exitCode()).as(applied.err()).isZero();
        assertThat(applied.out()).startsWith("status-test: APPLIED limit 1.0 GiB per rank").contains("revision 10");

        CommandLineTest.Run stale = run("limit", "status-test", "512MiB", "--revision", "9");
        assertThat(stale.exitCode()).isEqualTo(1);
        assertThat(stale.out()).startsWith("status-test: STALE");

        CommandLineTest.Run conflict = run("limit", "status-test", "512MiB", "--revision", "10");
        assertThat(conflict.exitCode()).isEqualTo(1);
        assertThat(conflict.out()).startsWith("status-test: CONFLICT");

        // 40 blocks of 64 KiB are in use, 32 to a page: two pages stay above a zero limit until freed.
        CommandLineTest.Run deferred = run("limit", "status-test", "0", "--revision", "11");
        assertThat(deferred.exitCode()).as(deferred.err()).isZero();
        assertThat(deferred.out()).startsWith("status-test: DEFERRED").contains("pages in use");

        assertThat(run("limit", "status-test", "1GiB", "--revision", "12").exitCode()).isZero();
    }

    @Test
    void limitOfAnInstanceThatIsNotThereFailsWithOneLine() {
        CommandLineTest.Run run = run("limit", "nobody", "1GiB");
        assertThat(run.exitCode()).isEqualTo(1);
        assertThat(run.err().strip()).doesNotContain("\n").contains("no coordinator for instance nobody")
                .doesNotContain("cluster manager");
    }
}
