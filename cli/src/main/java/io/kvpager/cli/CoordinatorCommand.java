package io.kvpager.cli;

import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Spec;

/**
 * One cache coordinator joining the cluster. Like {@link WorkerCommand}: options are checked now,
 * and the command exits with 2 saying that clustering arrives with the cluster manager.
 */
@Command(name = "coordinator", mixinStandardHelpOptions = true,
        description = "Run the coordinator of a cache instance as a clustered node.")
final class CoordinatorCommand implements Callable<Integer> {

    @Spec
    CommandSpec spec;

    @Option(names = "--instance", required = true, paramLabel = "I", converter = InstanceName.class,
            description = "Cache instance to coordinate.")
    String instance;

    @Option(names = "--tp", required = true, paramLabel = "N", description = "Tensor-parallel size: ranks per stage.")
    int tp;

    @Option(names = "--pp", paramLabel = "M", defaultValue = "1", description = "Pipeline-parallel size: stages (default: ${DEFAULT-VALUE}).")
    int pp;

    @Mixin
    ClusterOptions cluster;

    @Override
    public Integer call() {
        try {
            if (tp < 1 || pp < 1) {
                throw new IllegalArgumentException("--tp and --pp are sizes, 1 or more; got tp " + tp + ", pp " + pp);
            }
            cluster.validate();
        } catch (IllegalArgumentException e) {
            throw new ParameterException(spec.commandLine(), e.getMessage(), e);
        }
        spec.commandLine().getErr().println(spec.qualifiedName() + ": cannot start coordinator " + instance + " (tp " + tp + ", pp " + pp + "), " + cluster
                + ": clustered nodes arrive with the cluster manager, which this build does not include yet");
        return spec.exitCodeOnInvalidInput();
    }
}
