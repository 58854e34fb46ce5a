package io.kvpager.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import io.kvpager.cache.KvCacheOptions;
import io.kvpager.spi.DeviceFactory;
import io.kvpager.worker.RankWorkerOptions;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import picocli.CommandLine;

/** Parsing, help and usage errors of every command, through the same entry point as {@code main}. */
class CommandLineTest {

    record Run(int exitCode, String out, String err) {
    }

    static Run run(String... args) {
        StringWriter out = new StringWriter();
        StringWriter err = new StringWriter();
        CommandLine commandLine = KvPager.commandLine(new KvPager());
        commandLine.setOut(new PrintWriter(out, true));
        commandLine.setErr(new PrintWriter(err, true));
        int code = commandLine.execute(args);
        return new Run(code, out.toString(), err.toString());
    }

    @Test
    void helpListsTheCommands() {
        Run run = run("--help");
        assertThat(run.exitCode()).isZero();
        assertThat(run.out()).contains("Usage: kvpager").contains("demo").contains("status").contains("top").contains("limit")
                .contains("worker").contains("coordinator");
    }

    @ParameterizedTest
    @ValueSource(strings = {"demo", "status", "top", "limit", "worker", "coordinator"})
    void everyCommandHasHelp(String command) {
        Run run = run(command, "--help");
        assertThat(run.exitCode()).isZero();
        assertThat(run.out()).startsWith("Usage: kvpager " + command);
        assertThat(run.err()).isEmpty();
    }

    @Test
    void versionComesFromTheBuild() {
        Run run = run("--version");
        assertThat(run.exitCode()).isZero();
        assertThat(run.out()).startsWith("kvpager ");
    }

    @ParameterizedTest
    @ValueSource(strings = {
        "",
        "frobnicate",
        "demo --bogus",
        "demo --duration soon",
        "demo --duration 100ms",
        "demo --models 7b,405b",
        "demo --models 7b,7b",
        "demo --tp 0",
        "demo --kv-dtype int4",
        "demo --idle-handle-pages -1",
        "demo --idle-handle-pages many",
        "demo --gpu-memory-percent 0",
        "demo --gpu-memory-percent 101",
        "demo --gpu-memory-percent 0.9",
        "demo --capacity lots",
        "demo --capacity 100MiB",
        "demo --limit 7b",
        "demo --limit 405b=1GiB",
        "demo --device tpu",
        "demo --metrics-port 70000",
        "demo --policy fair",
        "demo --compare --policy static",
        "demo --trace-preset zigzag",
        "demo --trace no-such-trace.csv",
        "demo --trace azure-conv --trace-preset rotating",
        "demo --slo-ttft 0ms",
        "demo --slo-tpot soon",
        "demo --load 0",
        "demo --load -0.5",
        "demo --load 4.5",
        "demo --load NaN",
        "demo --load lots",
        "demo --attention-bandwidth 0",
        "demo --attention-bandwidth -2.7",
        "demo --attention-bandwidth 101",
        "demo --attention-bandwidth NaN",
        "demo --attention-bandwidth fast",
        "limit",
        "limit model-7b",
        "limit model-7b 12XB",
        "limit model-7b -5GiB",
        "limit bad.name 1GiB",
        "limit model-7b 1GiB --revision -1",
        "status --timeout never",
        "top --frames -1",
        "worker --tp 0",
        "worker --instance a.b --tp 0",
        "worker --instance a --tp -1",
        "worker --instance a --tp 0 --gpu -1",
        "worker --instance a --tp 0 --cluster-port 70000",
        "worker --instance a --tp 0 --lease-grace soon",
        "worker --instance a --tp 0 --lease-grace 2h",
        "worker --instance a --tp 0 --gpu-memory-percent 0",
        "worker --instance a --tp 0 --gpu-memory-percent 150",
        "coordinator --instance a --tp 0",
        "coordinator --instance a --tp 1 --guarantee 101%",
        "coordinator --instance a --tp 1 --guarantee lots",
        "coordinator --instance a --tp 1 --reclaim-deadline 2h",
        "coordinator --instance a"})
    void badArgumentsGiveOneLineAndExitCode2(String args) {
        Run run = run(args.isEmpty() ? new String[0] : args.split(" "));
        assertThat(run.exitCode()).as("exit code of '%s'", args).isEqualTo(2);
        assertThat(run.err().strip()).as("stderr of '%s'", args).isNotEmpty().doesNotContain("\n").startsWith("kvpager");
        assertThat(run.out()).isEmpty();
    }

    @Test
    void badSharingAndTraceFlagsAreRefusedNamingWhatIsAllowed() {
        assertThat(run("demo", "--policy", "fair").err()).contains("no sharing policy 'fair'; policies: static, first-come, arbitrated");
        assertThat(run("demo", "--trace-preset", "zigzag").err())
                .contains("no trace preset 'zigzag'; presets: rotating, overlapping, steady-bursts");
        assertThat(run("demo", "--compare", "--policy", "static").err()).contains("--compare runs every policy; leave out --policy static");
        assertThat(run("demo", "--slo-ttft", "0ms").err()).contains("--slo-ttft").contains("must be a positive duration");
        assertThat(run("demo", "--attention-bandwidth", "0").err())
                .contains("--attention-bandwidth must be above 0 and at most 100 TB/s").contains("got 0.0");
    }

    @Test
    void aLoadAtOrBelowZeroOrAbove4IsRefusedNamingTheFlagAndTheRange() {
        for (String bad : new String[] {"0", "-0.5", "4.5", "NaN", "Infinity"}) {
            Run run = run("demo", "--load", bad, "--duration", "2s");
            assertThat(run.exitCode()).as("--load %s", bad).isEqualTo(2);
            assertThat(run.err()).as("--load %s", bad).contains("--load must be above 0 and at most 4 (the mean KV the trace offers, in pages, "
                    + "over the caches' memory), got " + Double.parseDouble(bad));
            assertThat(run.out()).isEmpty();
        }
        assertThat(run("demo", "--load", "lots").err()).contains("--load").contains("'lots'");
    }

    @Test
    void aGpuShareOutsideAPercentIsRefusedNamingTheFlag() {
        assertThat(run("demo", "--gpu-memory-percent", "101").err()).contains("--gpu-memory-percent must be in 1..100, got 101");
        assertThat(run("worker", "--instance", "a", "--tp", "0", "--gpu-memory-percent", "0", "--cluster-name", "test").err())
                .contains("--gpu-memory-percent must be in 1..100, got 0");
    }

    @Test
    void aBadGuaranteeOrReclaimDeadlineIsRefusedNamingTheFlag() {
        assertThat(run("coordinator", "--instance", "a", "--tp", "1", "--guarantee", "101%", "--cluster-name", "test").err())
                .contains("--guarantee must be in 0..100, got 101");
        assertThat(run("coordinator", "--instance", "a", "--tp", "1", "--guarantee", "lots", "--cluster-name", "test").err())
                .contains("'lots' is neither a percent (30%) nor a size (40GiB)");
        assertThat(run("coordinator", "--instance", "a", "--tp", "1", "--reclaim-deadline", "2h", "--cluster-name", "test").err())
                .contains("--reclaim-deadline must be in 1..3600000, got 7200000");
    }

    @Test
    void aBadSizeSaysWhatASizeLooksLike() {
        assertThat(run("limit", "model-7b", "12XB").err()).contains("'12XB' is not a size").contains("40GiB");
    }

    /** status, top and limit are HTTP clients: their help lists no member flag, and a member flag is a usage error. */
    @ParameterizedTest
    @ValueSource(strings = {"status", "top", "limit"})
    void clientCommandsTakeNoMemberFlags(String command) {
        Run help = run(command, "--help");
        assertThat(help.exitCode()).isZero();
        for (String flag : KvPager.MEMBER_FLAGS) {
            assertThat(help.out()).as("%s --help", command).doesNotContain(flag);
        }
        assertThat(help.out()).contains("--cluster-name").contains("--cluster-join").contains("--node").contains("--tls-key-store");
        Run refused = command.equals("limit") ? run(command, "llama", "1GiB", "--cluster", "--cluster-member-port", "5701")
                : run(command, "--cluster", "--cluster-member-port", "5701");
        assertThat(refused.exitCode()).isEqualTo(2);
        assertThat(refused.err()).contains("--cluster-member-port");
        assertThat(run("worker", "--help").out()).contains("--cluster-member-port").contains("--tls-key-store");
    }

    @Test
    void aNegativeLimitIsAnInvalidSizeNotAMissingOne() {
        Run run = run("limit", "llama", "-5GiB");
        assertThat(run.exitCode()).isEqualTo(2);
        assertThat(run.err()).contains("'-5GiB'").doesNotContain("Missing required parameter");
    }

    @Test
    void aCoordinatorWithoutTheCachesGeometryIsAUsageError() {
        Run run = run("coordinator", "--instance", "llama", "--tp", "2", "--cluster-name", "test");
        assertThat(run.exitCode()).isEqualTo(2);
        assertThat(run.err().strip()).doesNotContain("\n")
                .contains("--layers is required (or layers in the --config file, $KVPAGER_LAYERS, -Dkvpager.layers)");
    }

    /** The command line takes exactly the names and device kinds a coordinator and a worker take, in the same words. */
    @ParameterizedTest
    @ValueSource(strings = {"worker", "coordinator"})
    void anInstanceNameOrDeviceIsRefusedInTheWordsOfTheOptions(String command) {
        String refused = catchThrowable(() -> new KvCacheOptions().setInstance("a.b")).getMessage();
        Run run = run(command, "--instance", "a.b", "--tp", "1", "--cluster-name", "test");
        assertThat(run.exitCode()).isEqualTo(2);
        assertThat(run.err()).contains(refused);
        String longest = "n".repeat(64);
        assertThat(new InstanceName().convert(longest)).isEqualTo(new RankWorkerOptions().setInstance(longest).getInstance());
        Run device = run("worker", "--instance", "llama", "--tp", "0", "--device", "tpu", "--cluster-name", "test");
        assertThat(device.exitCode()).isEqualTo(2);
        assertThat(device.err()).contains(catchThrowable(() -> new RankWorkerOptions().setDevice("tpu")).getMessage()
                .replace("device", "--device"));
    }

    @Test
    void aBadValueOfATypedFlagNamesTheFlag() {
        Run run = run("coordinator", "--instance", "llama", "--tp", "2", "--layers", "0", "--block-size", "16KiB", "--pages", "64");
        assertThat(run.exitCode()).isEqualTo(2);
        assertThat(run.err().strip()).doesNotContain("\n").startsWith("kvpager coordinator: --layers must be >= 1, got 0");
    }

    /** The coordinator reads the same layers as KvCacheOptions.load: a bad -Dkvpager.* property fails before joining. */
    @Test
    void aCoordinatorReadsKvpagerSystemProperties() {
        System.setProperty("kvpager.blockBytes", "sixteen");
        try {
            Run run = run("coordinator", "--instance", "llama", "--tp", "2", "--layers", "8", "--pages", "64");
            assertThat(run.exitCode()).isEqualTo(2);
            assertThat(run.err().strip()).doesNotContain("\n").contains("kvpager.blockBytes");
        } finally {
            System.clearProperty("kvpager.blockBytes");
        }
    }

    @Test
    void aCoordinatorConfigThatIsNotJsonIsAUsageErrorNamingIt(@TempDir Path dir) throws Exception {
        Path config = dir.resolve("cache.json");
        Files.writeString(config, "layers: 32");
        Run run = run("coordinator", "--instance", "llama", "--tp", "2", "--config", config.toString());
        assertThat(run.exitCode()).isEqualTo(2);
        assertThat(run.err().strip()).doesNotContain("\n").contains("--config " + config, "cannot read kvpager options");
    }

    @Test
    void aKeyStoreWithoutItsPasswordInTheEnvironmentIsAUsageError() {
        Assumptions.assumeTrue(System.getenv(ClusterOptions.KEY_STORE_PASSWORD) == null);
        Run run = run("worker", "--instance", "llama", "--tp", "0", "--tls-key-store", "node.p12");
        assertThat(run.exitCode()).isEqualTo(2);
        assertThat(run.err().strip()).doesNotContain("\n").contains("--tls-key-store", ClusterOptions.KEY_STORE_PASSWORD);
    }

    @Test
    void badClusterFlagsAreUsageErrorsNamingTheFlag() {
        Run worker = run("worker", "--instance", "llama", "--tp", "0", "--cluster-host", "localhost");
        assertThat(worker.exitCode()).isEqualTo(2);
        assertThat(worker.err()).contains("--cluster-host", "IP address");
        Run quorum = run("worker", "--instance", "llama", "--tp", "0", "--cluster-quorum", "0");
        assertThat(quorum.exitCode()).isEqualTo(2);
        assertThat(quorum.err()).contains("--cluster-quorum: quorum must be in 1..64, got 0");
        Run status = run("status", "--cluster", "--cluster-join", "10.0.0.1:99999");
        assertThat(status.exitCode()).isEqualTo(2);
        assertThat(status.err()).contains("--cluster-join", "port outside 1..65535");
    }

    @Test
    void aProcessOfItsOwnSaysItReachesOnlyItsOwnCaches() {
        Run status = run("status");
        assertThat(status.exitCode()).isEqualTo(StatusCommand.UNREACHABLE);
        assertThat(status.err().strip()).doesNotContain("\n")
                .startsWith("kvpager status: no cache instances found; this process reaches only caches it runs itself")
                .contains("add --cluster");
        Run limit = run("limit", "model-7b", "40GiB");
        assertThat(limit.exitCode()).isEqualTo(1);
        assertThat(limit.err().strip()).doesNotContain("\n")
                .startsWith("kvpager limit: no coordinator for instance model-7b at kvpager.model-7b.coordinator; this process")
                .contains("add --cluster");
    }

    @Test
    void cudaWithoutAGpuFailsFastSayingWhy() {
        Assumptions.assumeTrue(cudaUnavailable(), "this machine has a usable GPU");
        Run worker = run("worker", "--instance", "llama", "--tp", "0", "--device", "cuda");
        Run demo = run("demo", "--device", "cuda");
        for (Run run : new Run[] {worker, demo}) {
            assertThat(run.exitCode()).isEqualTo(2);
            assertThat(run.err().strip()).doesNotContain("\n").containsIgnoringCase("cuda");
        }
    }

    private static boolean cudaUnavailable() {
        try {
            return DeviceFactory.forKind("cuda").unavailableReason().isPresent();
        } catch (IllegalArgumentException notInstalled) {
            return true;
        }
    }

    /** A probe tells a cluster where nothing answers (4) from a command that failed (1). */
    @Test
    void statusOfAClusterWhereNoNodeAnswersExitsUnreachable() throws Exception {
        int closed;
        try (java.net.ServerSocket socket = new java.net.ServerSocket(0, 1, java.net.InetAddress.getLoopbackAddress())) {
            closed = socket.getLocalPort();
        }
        Run run = run("status", "--cluster", "--cluster-name", "nobody", "--node", "127.0.0.1:" + closed, "--timeout", "300ms");
        assertThat(run.exitCode()).isEqualTo(4);
        assertThat(run.err()).contains("kvpager status: no node of cluster 'nobody' answered within 300 ms")
                .contains("127.0.0.1:" + closed);
    }
}
