package io.kvpager.cli;

import io.kvpager.cli.status.CoordinatorClient;
import io.kvpager.cli.status.InstanceStatus;
import io.kvpager.cli.status.StatusTable;
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

/** {@code kvpager status}: what each instance holds now; exit code 1 when one is unreachable or unhealthy. */
@Command(name = "status", mixinStandardHelpOptions = true,
        description = "Show every cache instance: limit, mapped memory, reserve, blocks in use, ranks and their health.")
final class StatusCommand implements Callable<Integer> {

    @Spec
    CommandSpec spec;

    @ParentCommand
    KvPager root;

    @Mixin
    InstanceSelection selection;

    @Option(names = "--timeout", paramLabel = "TIME", defaultValue = "5s", converter = DurationConverter.class,
            description = "How long to wait for each coordinator (default: ${DEFAULT-VALUE}).")
    Duration timeout;

    @Override
    public Integer call() throws Exception {
        try (Node node = root.node(false)) {
            CoordinatorClient client = new CoordinatorClient(node.vertx(), timeout.toMillis());
            List<InstanceStatus> status = selection.resolve(node.vertx()).compose(client::status)
                    .await(timeout.toMillis() * 2, TimeUnit.MILLISECONDS);
            if (status.isEmpty()) {
                spec.commandLine().getErr().println("kvpager status: no cache instances found" + root.reachHint());
                return 1;
            }
            spec.commandLine().getOut().print(StatusTable.render(status));
            spec.commandLine().getOut().flush();
            return status.stream().allMatch(InstanceStatus::healthy) ? 0 : 1;
        }
    }
}
