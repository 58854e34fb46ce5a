package io.kvpager.cli;

import io.kvpager.cli.status.ClusterClient;
import io.kvpager.cli.status.CoordinatorClient;
import io.vertx.core.Future;
import java.io.IOException;
import io.kvpager.cli.status.TopScreen;
import java.time.Duration;
import java.util.concurrent.Callable;
import org.jline.terminal.Terminal;
import org.jline.terminal.TerminalBuilder;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

/** {@code kvpager top}: {@code status}, redrawn live until q or Ctrl-C. */
@Command(name = "top", mixinStandardHelpOptions = true,
        description = "Show every cache instance live, redrawn every interval; q or Ctrl-C quits.")
final class TopCommand extends ClientCommand implements Callable<Integer> {

    @Mixin
    InstanceSelection selection;

    @Option(names = "--interval", paramLabel = "TIME", defaultValue = "1s", converter = DurationConverter.class,
            description = "Time between refreshes (default: ${DEFAULT-VALUE}).")
    Duration interval;

    @Option(names = "--frames", paramLabel = "N", defaultValue = "0",
            description = "Stop after N refreshes; 0 runs until q (default: ${DEFAULT-VALUE}).")
    int frames;

    @Override
    public Integer call() throws Exception {
        if (frames < 0) {
            throw new picocli.CommandLine.ParameterException(spec.commandLine(), "--frames must be 0 or more, got " + frames);
        }
        ClusterClient remote = root.clusterClient(cluster, Duration.ofMillis(Math.max(100, Math.min(1000, interval.toMillis()))));
        if (remote != null) {
            try (Terminal terminal = TerminalBuilder.builder().system(true).dumb(true).build()) {
                new TopScreen(terminal, () -> {
                    try {
                        return Future.succeededFuture(remote.status(selection.names));
                    } catch (IOException e) {
                        return Future.failedFuture(e);
                    }
                }, interval).run(frames);
            }
            return 0;
        }
        try (Node node = root.node(cluster); Terminal terminal = TerminalBuilder.builder().system(true).dumb(true).build()) {
            CoordinatorClient client = new CoordinatorClient(node.vertx(), Math.max(1000, interval.toMillis()));
            new TopScreen(terminal, () -> selection.resolve(node.vertx()).compose(client::status), interval).run(frames);
        }
        return 0;
    }
}
