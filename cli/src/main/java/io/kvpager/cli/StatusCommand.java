package io.kvpager.cli;

import io.kvpager.cli.status.CoordinatorClient;
import io.kvpager.cli.status.InstanceStatus;
import io.kvpager.cli.status.StatusTable;
import io.kvpager.cluster.ClusterDirectory;
import io.kvpager.cluster.RegisteredWorker;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.concurrent.TimeUnit;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParentCommand;
import picocli.CommandLine.Spec;

/**
 * {@code kvpager status}: what each instance holds now, and the workers whose instance no
 * coordinator serves; exit code 1 when an instance is unreachable or unhealthy, or such a worker runs.
 */
@Command(name = "status", mixinStandardHelpOptions = true,
        description = "Show every cache instance: limit, mapped memory, reserve, blocks in use, ranks and their health.")
final class StatusCommand implements Callable<Integer> {

    @Spec
    CommandSpec spec;

    @ParentCommand
    KvPager root;

    @Mixin
    ClusterJoin cluster;

    @Mixin
    InstanceSelection selection;

    @Option(names = "--timeout", paramLabel = "TIME", defaultValue = "5s", converter = DurationConverter.class,
            description = "How long to wait for each coordinator (default: ${DEFAULT-VALUE}).")
    Duration timeout;

    @Override
    public Integer call() throws Exception {
        try (Node node = root.node(cluster)) {
            CoordinatorClient client = new CoordinatorClient(node.vertx(), timeout.toMillis());
            List<InstanceStatus> status = selection.resolve(node.vertx()).compose(client::status)
                    .await(timeout.toMillis() * 2, TimeUnit.MILLISECONDS);
            // workers whose instance no coordinator serves hold their GPUs for nobody
            List<RegisteredWorker> uncoordinated = ClusterDirectory.of(node.vertx()).workersWithoutCoordinator()
                    .await(timeout.toMillis(), TimeUnit.MILLISECONDS).stream()
                    .filter(w -> selection.names.isEmpty() || selection.names.contains(w.instance())).toList();
            if (status.isEmpty() && uncoordinated.isEmpty()) {
                spec.commandLine().getErr().println("kvpager status: no cache instances found" + root.reachHint(cluster));
                return 1;
            }
            if (!status.isEmpty()) {
                spec.commandLine().getOut().print(StatusTable.render(status));
            }
            for (RegisteredWorker worker : uncoordinated) {
                spec.commandLine().getOut().println(worker.instance() + "  " + worker.rank() + "  no coordinator: the worker on node "
                        + worker.node() + " serves an instance that no coordinator serves");
            }
            spec.commandLine().getOut().flush();
            return uncoordinated.isEmpty() && status.stream().allMatch(InstanceStatus::healthy) ? 0 : 1;
        }
    }
}
