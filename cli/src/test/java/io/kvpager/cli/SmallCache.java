package io.kvpager.cli;

import io.kvpager.cache.KvCache;
import io.kvpager.cache.KvCacheOptions;
import io.kvpager.sim.SimOptions;
import io.vertx.core.Vertx;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/** A small cache for tests: tp 2 local workers on a simulated GPU of its own. */
final class SmallCache {

    private SmallCache() {
    }

    static KvCacheOptions options(String instance) {
        return new KvCacheOptions()
                .setInstance(instance)
                .setTp(2)
                .setLayers(2)
                .setBlockBytes(64 << 10)
                .setPages(16)
                .setLocalWorkers(true)
                .setDevice("sim")
                .setGpus(Map.of("pp0/tp0", 0, "pp0/tp1", 0))
                .setSim(SimOptions.defaults().withCapacityBytes(1L << 30).withGpuKey(instance + "-" + System.nanoTime()));
    }

    static KvCache deploy(Vertx vertx, String instance) throws Exception {
        return KvCache.deploy(vertx, options(instance)).await(30, TimeUnit.SECONDS);
    }
}
