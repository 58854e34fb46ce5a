package io.kvpager.cli;

import io.kvpager.cli.metrics.MetricsEndpoint;
import io.kvpager.cli.status.ClusterClient;
import java.time.Duration;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import java.util.concurrent.CountDownLatch;
import io.vertx.core.VertxOptions;
import picocli.CommandLine;
import java.util.List;
import picocli.CommandLine.Model.OptionSpec;
import picocli.CommandLine.Command;
import picocli.CommandLine.IVersionProvider;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Spec;
import javax.net.ssl.HttpsURLConnection;
import javax.net.ssl.SSLContext;

/**
 * The {@code kvpager} command line: {@code demo}, {@code status}, {@code top}, {@code limit},
 * {@code worker} and {@code coordinator}. Bad arguments end with one line on stderr and exit code
 * 2; a command that fails while running ends with one line and exit code 1.
 */
@Command(name = "kvpager", mixinStandardHelpOptions = true, versionProvider = KvPager.Version.class,
        description = "Elastic GPU KV cache for LLM serving.",
        subcommands = {DemoCommand.class, StatusCommand.class, TopCommand.class, LimitCommand.class, WorkerCommand.class,
            CoordinatorCommand.class})
public final class KvPager implements Runnable {

    @Spec
    CommandSpec spec;

    private final Vertx embedded;
    private final Future<?> stop;
    /** The client TLS context {@code main} started building before parsing, or {@code null}. */
    EarlyClientTls earlyTls;

    /** The command line of a process of its own: each command starts and closes its own Vert.x. */
    public KvPager() {
        this(null, null);
    }

    /**
     * The command line inside a program that already runs caches in {@code vertx}: {@code status},
     * {@code top} and {@code limit} ask those caches, and nothing closes {@code vertx}.
     */
    public KvPager(Vertx vertx) {
        this(vertx, null);
    }

    /**
     * The command line of a process of its own whose serving commands ({@code worker},
     * {@code coordinator}) also stop when {@code stop} completes, not only when the JVM is asked to:
     * for a program that runs a node for a while, and for tests.
     */
    public KvPager(Future<?> stop) {
        this(null, stop);
    }

    private KvPager(Vertx vertx, Future<?> stop) {
        this.embedded = vertx;
        this.stop = stop;
    }

    public static void main(String[] args) {
        // java.util.logging (JLine, the JDK) through SLF4J, set up when JUL is first used, so that a
        // command that logs nothing (status --cluster) does not pay for starting the logging
        if (System.getProperty("java.util.logging.config.class") == null && System.getProperty("java.util.logging.config.file") == null) {
            System.setProperty("java.util.logging.config.class", JulToSlf4j.class.getName());
        }
        KvPager root = new KvPager();
        root.earlyTls = EarlyClientTls.start(args, System.getenv());
        System.exit(commandLine(root).execute(args));
    }

    /** The picocli command line of {@code root}, with kvpager's one-line error handling. */
    /** The commands that ask a cluster's node over HTTP. */
    static final List<String> CLIENT_COMMANDS = List.of("status", "top", "limit");
    /**
     * The flags only a member of the cluster uses: its ports, its Hazelcast config, the cluster secret. A
     * client keeps its TLS stores: with TLS on it presents its certificate to the node's HTTPS endpoint.
     */
    static final List<String> MEMBER_FLAGS = List.of("--cluster-port", "--cluster-member-port", "--cluster-quorum", "--cluster-config",
            "--cluster-secret-file");

    public static CommandLine commandLine(KvPager root) {
        CommandLine commandLine = new CommandLine(root);
        commandLine.setParameterExceptionHandler(new UsageErrorHandler());
        commandLine.setExecutionExceptionHandler(new FailureHandler());
        // `limit llama -5GiB`: the size reaches its converter, which says what is wrong with it,
        // instead of being taken for an unknown option and reported as a missing SIZE
        commandLine.getSubcommands().get("limit").setUnmatchedOptionsArePositionalParams(true);
        // status, top and limit are HTTP clients of a node, never members: a member's flags mean nothing to them
        for (String client : CLIENT_COMMANDS) {
            CommandSpec spec = commandLine.getSubcommands().get(client).getCommandSpec();
            for (String flag : MEMBER_FLAGS) {
                OptionSpec option = spec.findOption(flag);
                if (option != null) {
                    spec.remove(option);
                }
            }
        }
        return commandLine;
    }

    @Override
    public void run() {
        throw new ParameterException(spec.commandLine(), "a command is required: demo, status, top, limit, worker or coordinator");
    }

    /**
     * The client of the cluster for a command that asks caches with {@code --cluster} from a
     * process of its own, or {@code null} when the command asks the caches of its own Vert.x.
     *
     * @throws ParameterException for bad cluster options, naming the flag
     */
    ClusterClient clusterClient(ClusterJoin cluster, Duration timeout) {
        if (embedded != null || !cluster.join) {
            return null;
        }
        try {
            SSLContext tls = cluster.options.clientTls(System.getenv(), earlyTls);
            if (tls != null) {
                // every HttpsURLConnection starts from the default factory, which would build the JDK's default
                // context (its CA store read and parsed) only to be replaced: this process's connections are these
                HttpsURLConnection.setDefaultSSLSocketFactory(tls.getSocketFactory());
            }
            return new ClusterClient(cluster.endpoints(), cluster.options.clusterName(), timeout, tls);
        } catch (IllegalArgumentException e) {
            throw new ParameterException(spec.commandLine(), e.getMessage(), e);
        }
    }

    /** The Vert.x for a command that asks the caches of its own process: the embedding program's, or a fresh one. */
    Node node(ClusterJoin cluster) {
        return node(false);
    }

    /** The Vert.x for a command: the embedding program's, or a fresh one (with Prometheus metrics when asked). */
    Node node(boolean metrics) {
        if (embedded != null) {
            return Node.borrow(embedded);
        }
        VertxOptions options = new VertxOptions();
        if (metrics) {
            options.setMetricsOptions(MetricsEndpoint.metricsOptions());
        }
        return Node.start(options);
    }

    /**
     * What a command that found nothing should add: without {@code --cluster}, a process of its
     * own reaches only the caches it runs itself.
     */
    String reachHint(ClusterJoin cluster) {
        return embedded != null || cluster.join ? ""
                : "; this process reaches only caches it runs itself: add --cluster (and the --cluster-* options) to reach other processes";
    }

    /**
     * Keeps a serving command's node up until the process is asked to stop (SIGTERM, Ctrl-C: the
     * JVM's shutdown, whose hook closes the node so that it leaves the cluster at once) or until
     * the stop signal this command line was made with completes.
     */
    void serve(Node node) throws InterruptedException {
        CountDownLatch stopped = new CountDownLatch(1);
        Thread hook = new Thread(() -> {
            node.close();
            stopped.countDown();
        }, "kvpager-shutdown");
        Runtime.getRuntime().addShutdownHook(hook);
        if (stop != null) {
            stop.onComplete(x -> stopped.countDown());
        }
        stopped.await();
        try {
            Runtime.getRuntime().removeShutdownHook(hook);
        } catch (IllegalStateException shuttingDown) {
            // the hook closes the node
        }
    }

    /** Runs {@code onStop} when the process or this command line is asked to stop; see {@link Interruption}. */
    Interruption interruption(Runnable onStop) {
        return new Interruption(onStop, stop);
    }

    /** The version from the jar's manifest; "development" when run from classes. */
    static final class Version implements IVersionProvider {
        @Override
        public String[] getVersion() {
            String version = KvPager.class.getPackage().getImplementationVersion();
            return new String[] {"kvpager " + (version == null ? "development" : version)};
        }
    }
}
