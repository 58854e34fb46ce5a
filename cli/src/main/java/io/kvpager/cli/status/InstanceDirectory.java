package io.kvpager.cli.status;

import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.shareddata.AsyncMap;
import java.util.List;

/**
 * The names of the cache instances reachable from this Vert.x, kept in the shared async map
 * {@value #MAP} (cluster-wide once Vert.x is clustered), so that {@code status} and {@code top}
 * find every instance without being told. A program that deploys caches registers them here
 * and removes them when it closes them.
 */
public final class InstanceDirectory {

    /** The shared map: instance name to the time it registered. */
    public static final String MAP = "kvpager.instances";

    private final Vertx vertx;

    public InstanceDirectory(Vertx vertx) {
        this.vertx = vertx;
    }

    public Future<Void> register(String instance) {
        return map().compose(m -> m.put(instance, System.currentTimeMillis()));
    }

    public Future<Void> unregister(String instance) {
        return map().compose(m -> m.remove(instance)).mapEmpty();
    }

    /** Every registered instance, sorted by name. */
    public Future<List<String>> instances() {
        return map().compose(AsyncMap::keys).map(keys -> keys.stream().sorted().toList());
    }

    private Future<AsyncMap<String, Long>> map() {
        return vertx.sharedData().getAsyncMap(MAP);
    }
}
