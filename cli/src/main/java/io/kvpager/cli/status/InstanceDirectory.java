package io.kvpager.cli.status;

import io.kvpager.cluster.ClusterDirectory;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import java.util.List;

/**
 * The names of the cache instances reachable from this Vert.x, so that {@code status} and
 * {@code top} find every instance without being told: the {@link ClusterDirectory}'s coordinated
 * instances (cluster-wide once Vert.x is clustered, each entry tied to the node that registered
 * it). A program that deploys caches registers them here and removes them when it closes them;
 * a clustered node's entries also go when it closes or leaves the cluster.
 */
public final class InstanceDirectory {

    private final ClusterDirectory directory;

    public InstanceDirectory(Vertx vertx) {
        this.directory = ClusterDirectory.of(vertx);
    }

    public Future<Void> register(String instance) {
        return directory.registerCoordinator(instance);
    }

    public Future<Void> unregister(String instance) {
        return directory.unregisterCoordinator(instance);
    }

    /** Every registered instance, sorted by name. */
    public Future<List<String>> instances() {
        return directory.coordinated();
    }
}
