package io.kvpager.impl.coordinator;

import io.kvpager.cache.CacheDeployer;
import io.kvpager.cache.KvCache;
import io.kvpager.cache.KvCacheOptions;
import io.vertx.core.Future;
import io.vertx.core.Vertx;

/** The coordinator behind {@link KvCache#deploy}, named in {@code META-INF/services}. */
public final class LocalCacheDeployer implements CacheDeployer {

    @Override
    public Future<KvCache> deploy(Vertx vertx, KvCacheOptions options) {
        return LocalKvCache.deploy(vertx, options);
    }
}
