package io.kvpager.cache;

import io.vertx.core.Future;
import io.vertx.core.Vertx;

/**
 * What {@link KvCache#deploy} deploys a cache with. kvpager-verticles' coordinator provides the
 * one implementation, found through {@link java.util.ServiceLoader} ({@code META-INF/services}),
 * so that this API names no class of {@code io.kvpager.impl}: the implementation depends on the
 * API, never the other way round. Applications call {@link KvCache#deploy}, not this.
 */
public interface CacheDeployer {

    /** As {@link KvCache#deploy}. */
    Future<KvCache> deploy(Vertx vertx, KvCacheOptions options);
}
