package io.kvpager.cli;

import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Spec;

/**
 * One rank worker joining the cluster. The options are parsed and checked now (including whether
 * the device can be opened here); joining a cluster needs the cluster manager, which this build
 * does not have yet, so the command says so and exits with 2 instead of pretending to run.
 */
@Command(name = "worker", mixinStandardHelpOptions = true,
        description = "Run one rank worker (pp, tp) of a cache instance as a clustered node.")
final class WorkerCommand implements Callable<Integer> {

    @Spec
    CommandSpec spec;

    @Option(names = "--instance", required = true, paramLabel = "I", converter = InstanceName.class,
            description = "Cache instance this rank belongs to.")
    String instance;

    @Option(names = "--pp", paramLabel = "P", defaultValue = "0", description = "Pipeline stage of this rank (default: ${DEFAULT-VALUE}).")
    int pp;

    @Option(names = "--tp", required = true, paramLabel = "R", description = "Tensor-parallel rank within the stage.")
    int tp;

    @Mixin
    DeviceOptions device;

    @Mixin
    ClusterOptions cluster;

    @Override
    public Integer call() {
        try {
            if (pp < 0 || tp < 0) {
                throw new IllegalArgumentException("--pp and --tp are rank indexes, 0 or more; got pp " + pp + ", tp " + tp);
            }
            device.validate();
            cluster.validate();
        } catch (IllegalArgumentException e) {
            throw new ParameterException(spec.commandLine(), e.getMessage(), e);
        }
        spec.commandLine().getErr().println(spec.qualifiedName() + ": cannot start worker " + instance + " pp" + pp + "/tp" + tp
                + " on " + device.kind + ":" + device.gpu + ", " + cluster
                + ": clustered nodes arrive with the cluster manager, which this build does not include yet");
        return spec.exitCodeOnInvalidInput();
    }
}
