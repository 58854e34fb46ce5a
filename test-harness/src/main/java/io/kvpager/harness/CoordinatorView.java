package io.kvpager.harness;

import io.kvpager.cache.KvCache;
import io.kvpager.impl.coordinator.Coordinator;
import io.kvpager.impl.coordinator.LocalKvCache;
import io.vertx.core.Future;
import io.vertx.core.Promise;

import java.util.function.Function;

/**
 * Reads the insides of a cache deployed in this Vert.x instance on the coordinator's own context,
 * where its single-threaded ledger may be touched.
 */
public final class CoordinatorView {

    private final LocalKvCache cache;

    public CoordinatorView(KvCache cache) {
        if (!(cache instanceof LocalKvCache local)) {
            throw new IllegalArgumentException("only a cache deployed in this Vert.x instance can be looked into, got " + cache);
        }
        this.cache = local;
    }

    /** {@code read} applied to the coordinator, on its context. */
    public <T> Future<T> call(Function<Coordinator, T> read) {
        Promise<T> promise = Promise.promise();
        cache.verticle().context().runOnContext(v -> {
            try {
                promise.complete(read.apply(cache.verticle().coordinator()));
            } catch (RuntimeException e) {
                promise.fail(e);
            }
        });
        return promise.future();
    }
}
