package io.kvpager.cli;

import io.kvpager.cli.text.ByteSize;
import io.kvpager.LimitResult;
import io.kvpager.cli.status.ClusterClient;
import io.kvpager.cli.status.CoordinatorClient;
import io.kvpager.cli.status.InstanceUnreachable;
import io.vertx.core.Future;
import java.time.Duration;
import java.util.concurrent.Callable;
import java.util.concurrent.TimeUnit;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

/**
 * {@code kvpager limit I SIZE}: changes an instance's memory limit per rank under a revision, and
 * prints the outcome. APPLIED and DEFERRED exit 0; STALE and CONFLICT (the change was not made)
 * exit 1.
 */
@Command(name = "limit", mixinStandardHelpOptions = true,
        description = {"Change the memory limit per rank of a cache instance.",
            "Outcomes: APPLIED; DEFERRED (more in use, converges as blocks are freed); STALE (older revision); CONFLICT (same revision, other limit)."})
final class LimitCommand extends ClientCommand implements Callable<Integer> {

    @Parameters(index = "0", paramLabel = "INSTANCE", converter = InstanceName.class, description = "The cache instance.")
    String instance;

    @Parameters(index = "1", paramLabel = "SIZE", converter = ByteSizeConverter.class,
            description = "Limit per rank: 40GiB, 512MiB, 1073741824, ...")
    long bytes;

    @Option(names = "--revision", paramLabel = "R",
            description = "Revision of this change, 0 to 2^62; a higher one wins (default: the next one after the revision in force, so the change applies).")
    Long revision;

    @Option(names = "--timeout", paramLabel = "TIME", defaultValue = "1s", converter = DurationConverter.class,
            description = "How long each node asked may take to answer, the coordinator's answer included; the nodes are asked in turn (default: ${DEFAULT-VALUE}).")
    Duration timeout;

    @Override
    public Integer call() throws Exception {
        Long rev = revision;
        if (rev != null && (rev < 0 || rev > 1L << 62)) {
            throw new picocli.CommandLine.ParameterException(spec.commandLine(), "--revision must be 0 to 2^62, got " + rev);
        }
        ClusterClient remote = root.clusterClient(cluster, timeout);
        LimitResult result;
        if (remote != null) {
            result = remote.limit(instance, bytes, rev);
        } else {
            try (Node node = root.node(cluster)) {
                result = new CoordinatorClient(node.vertx(), timeout.toMillis()).limit(instance, bytes, rev)
                        .recover(e -> Future.failedFuture(e instanceof InstanceUnreachable
                                ? new InstanceUnreachable(instance, e.getMessage() + root.reachHint(cluster)) : e))
                        .await(timeout.toMillis() * 2, TimeUnit.MILLISECONDS);
            }
        }
        spec.commandLine().getOut().println(describe(instance, result));
        spec.commandLine().getOut().flush();
        return switch (result.outcome()) {
            case APPLIED, DEFERRED -> 0;
            case STALE, CONFLICT -> 1;
        };
    }

    static String describe(String instance, LimitResult result) {
        String limit = ByteSize.format(result.limitBytes()) + " per rank (" + result.effectivePages() + " pages), revision "
                + result.revision();
        return instance + ": " + result.outcome() + " " + switch (result.outcome()) {
            case APPLIED -> "limit " + limit;
            case DEFERRED -> "limit " + limit + "; " + result.inUsePages() + " pages in use, converging as blocks are freed";
            case STALE -> "the limit in force has a newer revision: " + limit;
            case CONFLICT -> "the limit in force has the same revision with another size: " + limit;
        };
    }
}
