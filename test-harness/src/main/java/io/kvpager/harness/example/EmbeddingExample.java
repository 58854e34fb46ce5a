package io.kvpager.harness.example;

import io.kvpager.Allocation;
import io.kvpager.cache.KvCache;
import io.kvpager.cache.KvCacheOptions;
import io.kvpager.cache.KvPagerException;
import io.kvpager.metrics.CacheHealth;
import io.kvpager.metrics.KvCacheMeters;
import io.kvpager.metrics.MeteredKvCache;
import io.kvpager.metrics.RankCallMeters;
import io.kvpager.sim.SimOptions;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import io.vertx.core.Vertx;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * The README's "Using it from Java", whole: a cache on the simulated device, kvpager's meters in
 * the application's own registry, an allocation with its miss and failure handling, health, and
 * the close. The build runs it (EmbeddingExampleTest), so the README's code cannot rot.
 * Run with {@code --enable-native-access=ALL-UNNAMED} (the CUDA device uses java.lang.foreign).
 */
public final class EmbeddingExample {

    private EmbeddingExample() {
    }

    /** Runs the example; returns the Prometheus text the application would serve. */
    public static String run() throws Exception {
        Vertx vertx = Vertx.vertx();
        PrometheusMeterRegistry registry = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
        RankCallMeters rankCalls = new RankCallMeters(registry);
        rankCalls.install(vertx.eventBus());
        KvCacheOptions options = new KvCacheOptions().setInstance("llama-7b").setTp(2)
                .setLayers(32).setKvBuffers(2).setBlockBytes(64 * 1024).setPages(256)
                .setLocalWorkers(true)
                .setDevice("sim")                                        // "cuda" on a GPU
                .setSim(SimOptions.defaults().withCapacityBytes(8L << 30)); // a simulated 8 GiB GPU
        KvCache cache = MeteredKvCache.of(KvCache.deploy(vertx, options).await(60, TimeUnit.SECONDS), registry);
        KvCacheMeters meters = new KvCacheMeters(vertx, registry, List.of(cache));
        try {
            meters.start(1000).await(10, TimeUnit.SECONDS);
            Allocation allocation = cache.alloc(32).await(10, TimeUnit.SECONDS);
            if (allocation.isMiss()) {
                // no memory now: preempt a request and retry later; the reason says why
                System.out.println("miss: " + allocation.missReason() + ": " + allocation.detail());
            } else {
                // hand allocation.blocks() to the scheduler; grow the sequence near its last block, so
                // that its blocks stay in few pages; free them when the sequence ends
                Allocation grown = cache.alloc(1, allocation.block(allocation.size() - 1)).await(10, TimeUnit.SECONDS);
                System.out.println("grown: " + grown);
                if (!grown.isMiss()) {
                    cache.free(grown).await(10, TimeUnit.SECONDS);
                }
                cache.free(allocation).await(10, TimeUnit.SECONDS);
            }
            CacheHealth health = CacheHealth.of(cache.stats().await(10, TimeUnit.SECONDS));
            System.out.println("health: " + health.stateName() + (health.reason() == null ? "" : " (" + health.reason() + ")"));
            return registry.scrape();
        } catch (KvPagerException e) {
            // a rank's real error: e.code() to switch on, e.failures() names each rank, group, page and driver error
            throw new IllegalStateException("kvpager failed: " + e.code() + ": " + e.getMessage(), e);
        } finally {
            meters.close();
            rankCalls.remove(vertx.eventBus());
            cache.close().await(30, TimeUnit.SECONDS);   // unmaps every page, destroys the tensors
            vertx.close().await(30, TimeUnit.SECONDS);
        }
    }

    public static void main(String[] args) throws Exception {
        System.out.print(run());
    }
}
