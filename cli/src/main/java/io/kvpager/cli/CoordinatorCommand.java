package io.kvpager.cli;

import io.kvpager.KvCacheOptions;
import io.kvpager.cluster.ClusterNode;
import io.kvpager.cluster.ClusterNodeOptions;
import io.vertx.core.json.JsonObject;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
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
 * instance, destroys the tensors and leaves the cluster, in that order. The cache's options come from a JSON file of
 * {@link KvCacheOptions} fields, with the flags on top.
 */
@Command(name = "coordinator", mixinStandardHelpOptions = true,
        description = "Run the coordinator of a cache instance as a clustered node, until stopped.")
final class CoordinatorCommand implements Callable<Integer> {

    @Spec
    CommandSpec spec;

    @ParentCommand
    KvPager root;

    @Option(names = "--instance", required = true, paramLabel = "I", converter = InstanceName.class,
            description = "Cache instance to coordinate.")
    String instance;

    @Option(names = "--tp", required = true, paramLabel = "N", description = "Tensor-parallel size: ranks per stage.")
    int tp;

    @Option(names = "--pp", paramLabel = "M", defaultValue = "1", description = "Pipeline-parallel size: stages (default: ${DEFAULT-VALUE}).")
    int pp;

    @Option(names = "--config", paramLabel = "FILE",
            description = "The cache's options as JSON (layers, blockBytes, pages, layout, reserve, limits, timeouts, ...).")
    Path config;

    @Option(names = "--layers", paramLabel = "N", description = "Layers of the model (overrides the config).")
    Integer layers;

    @Option(names = "--block-size", paramLabel = "SIZE", converter = ByteSizeConverter.class,
            description = "Bytes of one block of one layer and buffer, e.g. 64KiB (overrides the config).")
    Long blockBytes;

    @Option(names = "--pages", paramLabel = "N", description = "Virtual page ids of the pool (overrides the config).")
    Integer pages;

    @Mixin
    ClusterOptions cluster;

    @Override
    public Integer call() throws Exception {
        KvCacheOptions options;
        ClusterNodeOptions nodeOptions;
        try {
            if (tp < 1 || pp < 1) {
                throw new IllegalArgumentException("--tp and --pp are sizes, 1 or more; got tp " + tp + ", pp " + pp);
            }
            options = cacheOptions();
            nodeOptions = cluster.nodeOptions(System.getenv());
        } catch (IllegalArgumentException e) {
            throw new ParameterException(spec.commandLine(), e.getMessage(), e);
        }
        try (Node node = Node.join(nodeOptions)) {
            ClusterNode member = node.cluster();
            long wait = options.getTensorsDeadlineMs() + options.getSendTimeoutMs();
            // deployed and listed in the cluster's directory, tied to this node
            member.deployCache(options).await(wait, TimeUnit.MILLISECONDS);
            spec.commandLine().getOut().println("kvpager coordinator: cache " + instance + " (tp " + tp + ", pp " + pp + ", "
                    + options.getPages() + " pages) ready at kvpager." + instance + ".coordinator, " + cluster + ", node "
                    + member.nodeId() + ", member " + member.memberAddress());
            spec.commandLine().getOut().flush();
            // closing the node (the shutdown hook on SIGTERM, or the end of this block) removes the
            // directory entry first, then destroys the tensors and leaves the cluster
            root.serve(node);
        }
        return 0;
    }

    /** The config file's options, the flags on top, the ranks in other processes; validated. */
    private KvCacheOptions cacheOptions() {
        KvCacheOptions options;
        if (config != null) {
            try {
                options = new KvCacheOptions(new JsonObject(Files.readString(config)));
            } catch (IOException e) {
                throw new IllegalArgumentException("--config: cannot read " + config + ": " + e.getMessage(), e);
            } catch (io.vertx.core.json.DecodeException e) {
                throw new IllegalArgumentException("--config: " + config + " is not a JSON object: " + OneLine.of(e), e);
            }
        } else {
            options = new KvCacheOptions();
        }
        options.setInstance(instance).setTp(tp).setPp(pp).setLocalWorkers(false);
        if (layers != null) {
            options.setLayers(layers);
        }
        if (blockBytes != null) {
            options.setBlockBytes(blockBytes);
        }
        if (pages != null) {
            options.setPages(pages);
        }
        return options.validate();
    }
}
