package io.kvpager.cli;

import io.kvpager.cache.KvCache;
import io.kvpager.cache.KvCacheOptions;
import io.kvpager.cli.metrics.MetricsEndpoint;
import io.kvpager.cli.status.ClusterAdmin;
import io.kvpager.cluster.ClusterNode;
import io.kvpager.cluster.ClusterNodeOptions;
import java.nio.file.Path;
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
 * One cache coordinator joining the cluster: deploys the cache of an instance, whose ranks are
 * workers in other processes of the cluster ({@code kvpager worker}), waits until every rank has
 * its tensors, registers the instance so that {@code status --cluster} finds it, and serves at
 * {@code kvpager.<instance>.coordinator} until the process is stopped, when it unregisters the
 * instance, destroys the tensors and leaves the cluster, in that order. The cache's options come
 * through {@link KvCacheOptions#load}: a JSON file of its fields, {@code KVPAGER_*} variables,
 * {@code -Dkvpager.*} properties, and the flags on top.
 */
@Command(name = "coordinator", mixinStandardHelpOptions = true,
        description = "Run the coordinator of a cache instance as a clustered node, until stopped.")
final class CoordinatorCommand implements Callable<Integer> {

    /** How long this node's endpoint waits for a coordinator when a client asks it. */
    private static final long ADMIN_TIMEOUT_MS = 5_000;

    @Spec
    CommandSpec spec;

    @ParentCommand
    KvPager root;

    @Option(names = "--instance", required = true, paramLabel = "I", converter = InstanceName.class,
            description = "Cache instance to coordinate.")
    String instance;

    @Option(names = "--tp", required = true, paramLabel = "N", description = "Tensor-parallel size: ranks per stage.")
    int tp;

    @Option(names = "--pp", paramLabel = "M", description = "Pipeline-parallel size: stages (default: the config's, or 1).")
    Integer pp;

    @Option(names = "--config", paramLabel = "FILE",
            description = "The cache's options as JSON (layers, blockBytes, pages, layout, reserve, limits, timeouts, ...), e.g. "
                    + "config/kvpager.json; KVPAGER_* variables and -Dkvpager.* properties go on top, the flags on top of all.")
    Path config;

    @Option(names = "--layers", paramLabel = "N", description = "Layers of the model (overrides the config).")
    Integer layers;

    @Option(names = "--block-size", paramLabel = "SIZE", converter = ByteSizeConverter.class,
            description = "Bytes of one block of one layer and buffer, e.g. 64KiB (overrides the config).")
    Long blockBytes;

    @Option(names = "--pages", paramLabel = "N", description = "Virtual page ids of the pool (overrides the config).")
    Integer pages;

    @Option(names = "--guarantee", paramLabel = "SHARE", converter = GuaranteeConverter.class,
            description = "The cache's guaranteed share of each GPU its ranks run on: a percent of the GPU's budget (30%%) or "
                    + "a size over its ranks there (40GiB); default: an equal split among the caches on the GPU (docs/sharing.md).")
    GuaranteeConverter.Typed guarantee;

    @Option(names = "--reclaim-deadline", paramLabel = "DURATION", converter = DurationConverter.class,
            description = "How long the engine has to give back what a reclaim asks, e.g. 500ms (default 250ms).")
    java.time.Duration reclaimDeadline;

    @Mixin
    ClusterOptions cluster;

    @Mixin
    NodeEndpointOption metricsPort;

    @Override
    @SuppressWarnings("try") // the rank wait only has to be open while the cache deploys, and closed after
    public Integer call() throws Exception {
        KvCacheOptions options;
        ClusterNodeOptions nodeOptions;
        try {
            if (tp < 1 || (pp != null && pp < 1)) {
                throw new IllegalArgumentException("--tp and --pp are sizes, 1 or more; got tp " + tp + ", pp " + pp);
            }
            options = cacheOptions();
            nodeOptions = cluster.nodeOptions(System.getenv());
            metricsPort.validate();
            metricsPort.checkExposure(nodeOptions);
        } catch (IllegalArgumentException e) {
            throw new ParameterException(spec.commandLine(), e.getMessage(), e);
        }
        try (Node node = Node.join(nodeOptions, metricsPort.on())) {
            ClusterNode member = node.cluster();
            long wait = options.getTensorsDeadlineMs() + options.getSendTimeoutMs();
            KvCache cache;
            try (RankWait waiting = new RankWait(node.vertx(), options, spec.commandLine().getErr())) {
                // deployed and listed in the cluster's directory, tied to this node
                cache = member.deployCache(options).await(wait, TimeUnit.MILLISECONDS);
            }
            MetricsEndpoint metrics = metricsPort.on() ? MetricsEndpoint.listen(node.vertx(), member.options().getHost(), metricsPort.port(),
                    NodeEndpointOption.PORTS, List.of(cache), new ClusterAdmin(node.vertx(), member.options().getClusterName(), ADMIN_TIMEOUT_MS),
                    EndpointTls.serverOptions(member.options())) : null;
            spec.commandLine().getOut().println("kvpager coordinator: cache " + instance + " (tp " + tp + ", pp " + options.getPp() + ", "
                    + options.getPages() + " pages) ready at kvpager." + instance + ".coordinator, " + cluster + ", node "
                    + member.nodeId() + ", member " + member.memberAddress() + MetricsEndpoint.describe(metrics, member.options().getHost()));
            spec.commandLine().getOut().flush();
            // closing the node (the shutdown hook on SIGTERM, or the end of this block) removes the
            // directory entry first, then destroys the tensors and leaves the cluster
            root.serve(node);
        }
        return 0;
    }

    /**
     * The cache's options through the one configuration path: the config file, {@code KVPAGER_*},
     * {@code -Dkvpager.*}, then the flags; the ranks always in other processes; validated.
     */
    private KvCacheOptions cacheOptions() {
        return new CacheOptionFlags()
                .flag("--instance", "instance", instance)
                .flag("--tp", "tp", tp)
                .flag("--pp", "pp", pp)
                .flag("--layers", "layers", layers)
                .flag("--block-size", "blockBytes", blockBytes)
                .flag("--pages", "pages", pages)
                .flag("--guarantee", "guaranteePercent", guarantee == null ? null : guarantee.percent())
                .flag("--guarantee", "guaranteeBytes", guarantee == null ? null : guarantee.bytes())
                .flag("--reclaim-deadline", "reclaimDeadlineMs", reclaimDeadline == null ? null : reclaimDeadline.toMillis())
                .fixed("localWorkers", false)
                .load(config);
    }
}
