package io.kvpager.cli;

import io.kvpager.cli.metrics.MetricsEndpoint;
import io.vertx.core.Vertx;
import io.vertx.core.VertxOptions;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.IVersionProvider;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Spec;

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

    /** The command line of a process of its own: each command starts and closes its own Vert.x. */
    public KvPager() {
        this(null);
    }

    /**
     * The command line inside a program that already runs caches in {@code vertx}: {@code status},
     * {@code top} and {@code limit} ask those caches, and nothing closes {@code vertx}.
     */
    public KvPager(Vertx vertx) {
        this.embedded = vertx;
    }

    public static void main(String[] args) {
        System.exit(commandLine(new KvPager()).execute(args));
    }

    /** The picocli command line of {@code root}, with kvpager's one-line error handling. */
    public static CommandLine commandLine(KvPager root) {
        CommandLine commandLine = new CommandLine(root);
        commandLine.setParameterExceptionHandler(new UsageErrorHandler());
        commandLine.setExecutionExceptionHandler(new FailureHandler());
        return commandLine;
    }

    @Override
    public void run() {
        throw new ParameterException(spec.commandLine(), "a command is required: demo, status, top, limit, worker or coordinator");
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
     * What a command that found nothing should add: a process of its own reaches only the caches
     * it runs itself until clustering arrives.
     */
    String reachHint() {
        return embedded != null ? ""
                : "; this process reaches only caches it runs itself: other processes need the cluster manager, which this build does not include yet";
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
