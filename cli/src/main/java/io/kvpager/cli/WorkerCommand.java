package io.kvpager.cli;

import io.kvpager.cli.metrics.MetricsEndpoint;
import io.kvpager.cli.status.ClusterAdmin;
import io.kvpager.cluster.ClusterNode;
import io.kvpager.cluster.ClusterNodeOptions;
import io.kvpager.internal.options.OptionRules;
import io.kvpager.sim.SimOptions;
import io.kvpager.internal.options.OptionRules;
import io.kvpager.worker.RankWorker;
import io.kvpager.worker.RankWorkerOptions;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.concurrent.TimeUnit;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.ParentCommand;
import picocli.CommandLine.Spec;

/**
 * One rank worker joining the cluster: a clustered node that serves rank {@code (pp, tp)} of an
 * instance at its event-bus address until the process is stopped (SIGTERM, Ctrl-C), when it gives
 * its memory back and leaves the cluster. Prints one line once it serves. The groups of a
 * coordinator whose node leaves the cluster are released after {@code --lease-grace}, unless a new
 * coordinator claims them first.
 */
@Command(name = "worker", mixinStandardHelpOptions = true,
        description = "Run one rank worker (pp, tp) of a cache instance as a clustered node, until stopped.")
final class WorkerCommand implements Callable<Integer> {

    private static final long DEPLOY_TIMEOUT_S = 60;

    /** How long this node's endpoint waits for a coordinator when a client asks it. */
    private static final long ADMIN_TIMEOUT_MS = 5_000;

    @Spec
    CommandSpec spec;

    @ParentCommand
    KvPager root;

    @Option(names = "--instance", required = true, paramLabel = "I", converter = InstanceName.class,
            description = "Cache instance this rank belongs to.")
    String instance;

    @Option(names = "--pp", paramLabel = "P", defaultValue = "0", description = "Pipeline stage of this rank (default: ${DEFAULT-VALUE}).")
    int pp;

    @Option(names = "--tp", required = true, paramLabel = "R", description = "Tensor-parallel rank within the stage.")
    int tp;

    @Mixin
    DeviceOptions device;

    @Option(names = "--sim-capacity", paramLabel = "SIZE", converter = ByteSizeConverter.class,
            description = "Memory of the simulated GPU (default: an H200's 141GiB); --device sim only.")
    Long simCapacity;

    @Option(names = "--lease-grace", paramLabel = "TIME", converter = DurationConverter.class,
            description = "How long this worker keeps the tensors of a coordinator whose node left the cluster before it "
                    + "releases them, unless a new coordinator claims them first, e.g. 3s or 500ms; 0 to 1h (default: 3s).")
    Duration leaseGrace;

    @Option(names = "--gpu-memory-percent", paramLabel = "P",
            description = "Share of the GPU's memory kvpager's caches may take between them, 1 to 100; the rest is left to "
                    + "CUDA contexts, kernels and the engine's own buffers (default: 90 on cuda, 100 on sim).")
    Integer gpuMemoryPercent;

    @Mixin
    ClusterOptions cluster;

    @Mixin
    NodeEndpointOption metricsPort;

    @Override
    public Integer call() throws Exception {
        RankWorkerOptions options;
        ClusterNodeOptions nodeOptions;
        try {
            if (pp < 0 || tp < 0) {
                throw new IllegalArgumentException("--pp and --tp are rank indexes, 0 or more; got pp " + pp + ", tp " + tp);
            }
            device.validate();
            if (simCapacity != null && !"sim".equals(device.kind)) {
                throw new IllegalArgumentException("--sim-capacity applies to --device sim only");
            }
            if (leaseGrace != null && (leaseGrace.isNegative() || leaseGrace.toMillis() > RankWorkerOptions.MAX_LEASE_GRACE_MS)) {
                throw new IllegalArgumentException("--lease-grace must be 0 to 1h, got " + leaseGrace);
            }
            options = new RankWorkerOptions().setInstance(instance).setPp(pp).setTp(tp).setDevice(device.kind)
                    .setGpu(device.gpu).setLeaseGraceMs(leaseGrace == null ? null : leaseGrace.toMillis());
            if (gpuMemoryPercent != null) {
                options.setGpuMemoryPercent(OptionRules.percent("--gpu-memory-percent", gpuMemoryPercent));
            }
            if (simCapacity != null) {
                options.setSim(SimOptions.defaults().withCapacityBytes(simCapacity));
            }
            options.validate();
            nodeOptions = cluster.nodeOptions(System.getenv());
            metricsPort.validate();
            metricsPort.checkExposure(nodeOptions);
        } catch (IllegalArgumentException e) {
            throw new ParameterException(spec.commandLine(), e.getMessage(), e);
        }
        try (Node node = Node.join(nodeOptions, metricsPort.on())) {
            ClusterNode member = node.cluster();
            MetricsEndpoint metrics = metricsPort.on() ? MetricsEndpoint.listen(node.vertx(), member.options().getHost(), metricsPort.port(),
                    NodeEndpointOption.PORTS, List.of(), new ClusterAdmin(node.vertx(), member.options().getClusterName(), ADMIN_TIMEOUT_MS),
                    EndpointTls.serverOptions(member.options())) : null;
            RankWorker worker = member.deployWorker(options).await(DEPLOY_TIMEOUT_S, TimeUnit.SECONDS);
            spec.commandLine().getOut().println("kvpager worker: " + worker.rank() + " of " + instance + " on " + device.kind + ":"
                    + device.gpu + " serving at " + worker.address() + ", " + cluster + ", node " + member.nodeId()
                    + ", member " + member.memberAddress() + MetricsEndpoint.describe(metrics, member.options().getHost()));
            spec.commandLine().getOut().flush();
            root.serve(node);
        }
        return 0;
    }
}
