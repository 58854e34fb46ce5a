package io.kvpager.metrics;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.kvpager.Allocation;
import io.kvpager.MissReason;
import io.kvpager.cache.KvCache;
import io.kvpager.cache.KvCacheOptions;
import io.kvpager.sim.SimOptions;
import java.time.Duration;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import io.vertx.core.Vertx;
import io.vertx.core.json.JsonObject;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * What an embedding application gets from the library: its own registry (no Vert.x metrics, no
 * HTTP), kvpager's meters registered in it, alloc and rank-call latencies as Prometheus histograms.
 */
class KvCacheMetersTest {

    private Vertx vertx;
    private KvCache cache;

    @BeforeEach
    void deploy() throws Exception {
        vertx = Vertx.vertx();
        KvCacheOptions options = new KvCacheOptions().setInstance("meters-test").setTp(2).setLayers(2).setBlockBytes(64 << 10)
                .setPages(16).setLocalWorkers(true).setDevice("sim")
                .setGpus(Map.of("pp0/tp0", 0, "pp0/tp1", 0))
                .setSim(SimOptions.defaults().withCapacityBytes(1L << 30).withGpuKey("meters-test-" + System.nanoTime()));
        cache = KvCache.deploy(vertx, options).await(30, TimeUnit.SECONDS);
    }

    @AfterEach
    void close() throws Exception {
        cache.close().await(30, TimeUnit.SECONDS);
        vertx.close().await(30, TimeUnit.SECONDS);
    }

    @Test
    void anApplicationRegistersKvpagersMetersInItsOwnRegistry() throws Exception {
        PrometheusMeterRegistry registry = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
        RankCallMeters calls = new RankCallMeters(registry);
        calls.install(vertx.eventBus());
        KvCache metered = MeteredKvCache.of(cache, registry);
        try (KvCacheMeters meters = new KvCacheMeters(vertx, registry, List.of(metered))) {
            meters.start(50).await(10, TimeUnit.SECONDS);
            Allocation served = metered.alloc(40).await(10, TimeUnit.SECONDS);
            assertThat(served.isMiss()).isFalse();
            assertThat(metered.setMemoryLimit(0, 1).await(10, TimeUnit.SECONDS)).isNotNull();
            Allocation miss = metered.alloc(200).await(10, TimeUnit.SECONDS);
            assertThat(miss.isMiss()).isTrue();
            await().atMost(Duration.ofSeconds(10))
                    .until(() -> meters.latest("meters-test").pool().misses().getOrDefault(MissReason.LIMIT, 0L) == 1L);

            String scrape = registry.scrape();
            assertThat(scrape)
                    .contains("# TYPE kvpager_alloc_seconds histogram")
                    .containsPattern("kvpager_alloc_seconds_bucket\\{instance=\"meters-test\",outcome=\"served\",reason=\"\",le=\"[0-9.]+\"} 1")
                    .containsPattern("kvpager_alloc_seconds_count\\{instance=\"meters-test\",outcome=\"miss\",reason=\"LIMIT\"} 1")
                    .containsPattern("kvpager_rank_calls_seconds_bucket\\{action=\"map\",instance=\"meters-test\",outcome=\"ok\",rank=\"pp0/tp0\",le=")
                    .containsPattern("kvpager_rank_served_seconds_bucket\\{action=\"map\",instance=\"meters-test\",outcome=\"ok\",rank=\"pp0/tp1\",le=")
                    .containsPattern("kvpager_misses_total\\{instance=\"meters-test\",reason=\"LIMIT\"} 1\\.0")
                    .containsPattern("kvpager_gpu_share_bytes\\{gpu=\"sim:meters-test-[0-9]+:0@[^\"]+\",instance=\"meters-test\"} [1-9]")
                    .containsPattern("kvpager_gpu_capacity_bytes\\{gpu=\"[^\"]+\",instance=\"meters-test\"} 1\\.073741824E9")
                    .contains("kvpager_cache_ready{instance=\"meters-test\"} 1.0");
        }
        calls.remove(vertx.eventBus());
        // closed and removed: only the alloc timers stay, which belong to the metered cache the application keeps
        assertThat(registry.scrape()).doesNotContain("kvpager_pages", "kvpager_rank_", "kvpager_gpu_", "kvpager_misses")
                .contains("kvpager_alloc_seconds_count");
    }

    @Test
    void actionNamesFromTheBusThatNameNoActionShareOneTag() throws Exception {
        PrometheusMeterRegistry registry = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
        RankCallMeters calls = new RankCallMeters(registry);
        calls.install(vertx.eventBus());
        try {
            String rank = io.kvpager.protocol.WorkerProtocol.rankAddress("meters-test", 0, 0);
            for (int i = 0; i < 20; i++) {
                var delivery = new io.vertx.core.eventbus.DeliveryOptions().addHeader(io.kvpager.protocol.WorkerProtocol.ACTION_HEADER,
                        "no-such-action-" + i);
                // the worker refuses each; what matters is the meters it leaves behind
                vertx.eventBus().request(rank, new JsonObject(), delivery).transform(ar -> io.vertx.core.Future.succeededFuture())
                        .await(10, TimeUnit.SECONDS);
            }
            String scrape = registry.scrape();
            assertThat(scrape).contains("action=\"" + RankCallMeters.UNKNOWN_ACTION + "\"").doesNotContain("no-such-action");
        } finally {
            calls.remove(vertx.eventBus());
        }
    }
}
