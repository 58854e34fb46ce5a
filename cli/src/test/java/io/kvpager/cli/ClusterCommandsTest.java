package io.kvpager.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.vertx.core.Promise;
import java.io.IOException;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.time.Duration;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import picocli.CommandLine;

/**
 * {@code kvpager worker} and {@code kvpager coordinator} as clustered nodes of a cluster of their
 * own, each run as the command line runs it (here on threads of the test's JVM, stopped by the
 * command line's stop signal instead of SIGTERM), and {@code status} and {@code limit} reaching
 * the cache from a third node with {@code --cluster}.
 */
@Timeout(value = 150, unit = TimeUnit.SECONDS)
class ClusterCommandsTest {

    private static final Duration START = Duration.ofSeconds(90);
    private static final Pattern MEMBER = Pattern.compile("member ([0-9.:]+)");
    private static final Pattern METRICS = Pattern.compile("metrics at http://([0-9.:]+)/metrics");

    /** A serving command running on a thread of its own: its output so far, and its exit code once it ends. */
    private record Serving(StringWriter out, StringWriter err, CompletableFuture<Integer> exit) {

        String awaitLine(String prefix) {
            await().atMost(START).until(() -> out.toString().contains(prefix) || exit.isDone());
            assertThat(exit).as("exited early: %s", err).isNotDone();
            return out.toString().lines().filter(l -> l.startsWith(prefix)).findFirst().orElseThrow();
        }
    }

    private static Serving serve(Promise<Void> stop, String... args) {
        StringWriter out = new StringWriter();
        StringWriter err = new StringWriter();
        CompletableFuture<Integer> exit = new CompletableFuture<>();
        Thread thread = new Thread(() -> {
            CommandLine commandLine = KvPager.commandLine(new KvPager(stop.future()));
            commandLine.setOut(new PrintWriter(out, true));
            commandLine.setErr(new PrintWriter(err, true));
            exit.complete(commandLine.execute(args));
        }, "kvpager-" + args[0]);
        thread.start();
        return new Serving(out, err, exit);
    }

    private static int freePort() {
        try (ServerSocket socket = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            return socket.getLocalPort();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    @Test
    void aWorkerAndACoordinatorRunAsClusterNodesAndStatusAndLimitReachThem() throws Exception {
        String cluster = "kvpager-cli-" + UUID.randomUUID().toString().substring(0, 8);
        Promise<Void> stop = Promise.promise();
        int first = freePort();
        Serving worker = serve(stop, "worker", "--instance", "cli-llama", "--tp", "0", "--sim-capacity", "1GiB",
                "--cluster-name", cluster, "--cluster-member-port", String.valueOf(first), "--cluster-join", "127.0.0.1:" + first,
                "--metrics-port", "0");
        String served = worker.awaitLine("kvpager worker:");
        assertThat(served).contains("pp0/tp0 of cli-llama on sim:0 serving at kvpager.cli-llama.pp0.tp0", "cluster '" + cluster + "'");
        Matcher member = MEMBER.matcher(served);
        assertThat(member.find()).isTrue();
        String join = member.group(1);

        // a worker whose instance no coordinator serves yet: status lists it as such and says not ready
        Matcher aloneMetrics = METRICS.matcher(served);
        assertThat(aloneMetrics.find()).as(served).isTrue();
        CommandLineTest.Run alone = CommandLineTest.run("status", "--cluster", "--cluster-name", cluster, "--node", aloneMetrics.group(1));
        assertThat(alone.exitCode()).as(alone.err()).isEqualTo(StatusCommand.NOT_READY);
        assertThat(alone.out()).contains("cli-llama  pp0/tp0  no coordinator: the worker on node ");

        Serving coordinator = serve(stop, "coordinator", "--instance", "cli-llama", "--tp", "1", "--layers", "2", "--block-size", "64KiB",
                "--pages", "16", "--cluster-name", cluster, "--cluster-member-port", String.valueOf(freePort()), "--cluster-join", join,
                "--metrics-port", "0");
        String ready = coordinator.awaitLine("kvpager coordinator:");
        assertThat(ready).contains("cache cli-llama (tp 1, pp 1, 16 pages) ready at kvpager.cli-llama.coordinator");
        Matcher metrics = METRICS.matcher(ready);
        assertThat(metrics.find()).as(ready).isTrue();
        Matcher workerMetrics = METRICS.matcher(served);
        assertThat(workerMetrics.find()).as(served).isTrue();

        // a client of the cluster through one node's endpoint, the worker's first: it joins nothing
        String nodes = workerMetrics.group(1) + "," + metrics.group(1);
        CommandLineTest.Run status = CommandLineTest.run("status", "--cluster", "--cluster-name", cluster, "--node", nodes);
        assertThat(status.exitCode()).as(status.err()).isZero();
        assertThat(status.out()).containsPattern("cli-llama\\s+ready\\s+1/1");
        CommandLineTest.Run otherCluster = CommandLineTest.run("status", "--cluster", "--cluster-name", cluster + "-other", "--node", nodes);
        // nothing of that cluster answered: unreachable, as a probe reads it
        assertThat(otherCluster.exitCode()).isEqualTo(4);
        assertThat(otherCluster.err()).contains("no node of cluster '" + cluster + "-other' answered", "(cluster '" + cluster + "')");
        CommandLineTest.Run limit = CommandLineTest.run("limit", "cli-llama", "64MiB", "--revision", "1", "--cluster",
                "--cluster-name", cluster, "--node", nodes);
        assertThat(limit.exitCode()).as(limit.err()).isZero();
        assertThat(limit.out()).contains("cli-llama: APPLIED limit 64.0 MiB per rank (8 pages)");

        stop.complete();
        assertThat(coordinator.exit().get(60, TimeUnit.SECONDS)).as(coordinator.err().toString()).isZero();
        assertThat(worker.exit().get(60, TimeUnit.SECONDS)).as(worker.err().toString()).isZero();
    }
}
