package io.kvpager.cli;

import io.kvpager.cli.status.InstanceDirectory;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import java.util.ArrayList;
import java.util.List;
import picocli.CommandLine.Parameters;

/** The instances a command looks at: those named, or every instance in the {@link InstanceDirectory}. */
final class InstanceSelection {

    @Parameters(paramLabel = "INSTANCE", arity = "0..*", converter = InstanceName.class,
            description = "Instances to show (default: every instance found).")
    List<String> names = new ArrayList<>();

    Future<List<String>> resolve(Vertx vertx) {
        return names.isEmpty() ? new InstanceDirectory(vertx).instances() : Future.succeededFuture(List.copyOf(names));
    }
}
