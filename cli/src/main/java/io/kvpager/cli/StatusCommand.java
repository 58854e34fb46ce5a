package io.kvpager.cli;

import io.kvpager.cli.status.ClusterClient;
import io.kvpager.cli.status.ClusterStatus;
import io.kvpager.cli.status.CoordinatorClient;
import io.kvpager.cli.status.InstanceStatus;
import io.kvpager.cli.status.StatusTable;
import io.kvpager.cluster.ClusterDirectory;
import io.kvpager.cluster.RegisteredWorker;
import io.kvpager.cluster.ClusterDirectory;
import io.kvpager.cluster.RegisteredWorker;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.concurrent.TimeUnit;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

/**
 * {@code kvpager status}: what each instance holds now, and the workers whose instance no
 * coordinator serves. The exit code says the worst state found, for scripts and probes:
 * {@value #READY} every instance ready, {@value #NOT_READY} one answered but is not ready
 * (degraded, a rank down, starting, failed) or a worker serves an instance no coordinator serves,
 * {@value #UNREACHABLE} one did not answer or none was found; 1 the command itself failed, 2 bad
 * arguments.
 */
@Command(name = "status", mixinStandardHelpOptions = true,
        description = "Show every cache instance: limit, mapped memory, reserve, blocks in use, ranks and their health.",
        exitCodeListHeading = "%nExit codes:%n",
        exitCodeList = {"0:every instance is ready", "3:an instance answered but is not ready (degraded, a rank down, starting, failed), or a worker serves an instance no coordinator serves",
            "4:an instance did not answer, or none was found", "1:the command failed", "2:bad arguments"})
final class StatusCommand extends ClientCommand implements Callable<Integer> {

    static final int READY = 0;
    static final int NOT_READY = 3;
    static final int UNREACHABLE = 4;

    @Mixin
    InstanceSelection selection;

    @Option(names = "--timeout", paramLabel = "TIME", defaultValue = "1s", converter = DurationConverter.class,
            description = "How long each node asked may take to answer, its coordinators' answers included; the nodes are asked at once (default: ${DEFAULT-VALUE}).")
    Duration timeout;

    /** The worst state among {@code status}, as an exit code. */
    static int exitCode(List<InstanceStatus> status) {
        int code = READY;
        for (InstanceStatus instance : status) {
            code = Math.max(code, instance.stats() == null ? UNREACHABLE : instance.healthy() ? READY : NOT_READY);
        }
        return code;
    }

    @Override
    public Integer call() throws Exception {
        ClusterClient remote = root.clusterClient(cluster, timeout);
        ClusterStatus found;
        if (remote != null) {
            try {
                found = remote.clusterStatus(selection.names);
            } catch (ClusterClient.Unreachable e) {
                // a probe tells "nothing answered" (4) from a command that failed (1)
                spec.commandLine().getErr().println("kvpager status: " + e.getMessage());
                return UNREACHABLE;
            }
        } else {
            try (Node node = root.node(cluster)) {
                CoordinatorClient client = new CoordinatorClient(node.vertx(), timeout.toMillis());
                List<InstanceStatus> status = selection.resolve(node.vertx()).compose(client::status)
                        .await(timeout.toMillis() * 2, TimeUnit.MILLISECONDS);
                List<RegisteredWorker> uncoordinated = ClusterDirectory.of(node.vertx()).workersWithoutCoordinator()
                        .await(timeout.toMillis(), TimeUnit.MILLISECONDS);
                found = new ClusterStatus(status, uncoordinated).of(selection.names);
            }
        }
        if (found.instances().isEmpty() && found.uncoordinated().isEmpty()) {
            spec.commandLine().getErr().println("kvpager status: no cache instances found" + root.reachHint(cluster));
            return UNREACHABLE;
        }
        if (!found.instances().isEmpty()) {
            spec.commandLine().getOut().print(StatusTable.render(found.instances()));
        }
        // workers whose instance no coordinator serves hold their GPUs for nobody
        for (RegisteredWorker worker : found.uncoordinated()) {
            spec.commandLine().getOut().println(worker.instance() + "  " + worker.rank() + "  no coordinator: the worker on node "
                    + worker.node() + " serves an instance that no coordinator serves");
        }
        spec.commandLine().getOut().flush();
        int code = exitCode(found.instances());
        return found.uncoordinated().isEmpty() ? code : Math.max(code, NOT_READY);
    }
}
