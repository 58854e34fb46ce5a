package io.kvpager.cli.metrics;

import static org.assertj.core.api.Assertions.assertThat;

import io.kvpager.Allocation;
import io.kvpager.MissReason;
import io.kvpager.cache.KvCache;
import io.kvpager.cache.KvCacheOptions;
import io.kvpager.sim.FaultPlan;
import io.kvpager.sim.SimOptions;
import io.vertx.core.Vertx;
import io.vertx.core.VertxOptions;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import io.vertx.ext.web.client.HttpResponse;
import io.vertx.ext.web.client.WebClient;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** The endpoint scraped over HTTP, as Prometheus would, with a cache running in the same Vert.x. */
class MetricsEndpointTest {

    private Vertx vertx;
    private KvCache cache;
    private MetricsEndpoint endpoint;
    private WebClient client;

    static KvCacheOptions options(String instance, JsonArray faults) {
        return new KvCacheOptions().setInstance(instance).setTp(2).setLayers(2).setBlockBytes(64 << 10)
                .setPages(16).setLocalWorkers(true).setDevice("sim")
                .setGpus(Map.of("pp0/tp0", 0, "pp0/tp1", 0))
                .setSim(SimOptions.defaults().withCapacityBytes(1L << 30).withGpuKey(instance + "-" + System.nanoTime())
                        .withFaults(FaultPlan.parse(faults).faults()));
    }

    @BeforeEach
    void start() throws Exception {
        vertx = Vertx.vertx(new VertxOptions().setMetricsOptions(MetricsEndpoint.metricsOptions()));
        cache = KvCache.deploy(vertx, options("metrics-test", new JsonArray())).await(30, TimeUnit.SECONDS);
        Allocation allocation = cache.alloc(40).await(10, TimeUnit.SECONDS);
        assertThat(allocation.isMiss()).isFalse();
        cache.setMemoryLimit(64L << 20, 1).await(10, TimeUnit.SECONDS);
        endpoint = MetricsEndpoint.listen(vertx, 0, List.of(cache));
        client = WebClient.create(vertx);
    }

    @AfterEach
    void stop() throws Exception {
        endpoint.close();
        client.close();
        cache.close().await(30, TimeUnit.SECONDS);
        vertx.close().await(30, TimeUnit.SECONDS);
    }

    private HttpResponse<Buffer> get(String path) throws Exception {
        return client.get(endpoint.port(), "localhost", path).send().await(10, TimeUnit.SECONDS);
    }

    @Test
    void servesKvpagerSeriesAndVertxOwnInPrometheusFormat() throws Exception {
        HttpResponse<Buffer> response = get("/metrics");
        assertThat(response.statusCode()).isEqualTo(200);
        String body = response.bodyAsString();
        assertThat(body)
                .contains("# TYPE kvpager_pages gauge")
                .containsPattern("kvpager_pages\\{instance=\"metrics-test\",state=\"in_use\"} 2\\.0")
                .containsPattern("kvpager_pages\\{instance=\"metrics-test\",state=\"mapped\"} [1-9]")
                .contains("kvpager_pages{instance=\"metrics-test\",state=\"reserve\"}")
                .containsPattern("kvpager_blocks_used\\{instance=\"metrics-test\"} 40\\.0")
                .containsPattern("kvpager_memory_mapped_bytes\\{instance=\"metrics-test\"} [1-9]")
                .containsPattern("kvpager_pages_limit\\{instance=\"metrics-test\"} 8\\.0")
                .containsPattern("kvpager_allocs_total\\{instance=\"metrics-test\"} 1\\.0")
                .contains("kvpager_misses_total{instance=\"metrics-test\",reason=\"LIMIT\"} 0.0")
                .contains("kvpager_misses_total{instance=\"metrics-test\",reason=\"OUT_OF_MEMORY\"} 0.0")
                .containsPattern("kvpager_page_maps_total\\{instance=\"metrics-test\"} [1-9]")
                .contains("kvpager_page_unmaps_total{instance=\"metrics-test\"}")
                .contains("kvpager_rank_up{instance=\"metrics-test\",rank=\"pp0/tp0\"} 1.0")
                .contains("kvpager_rank_up{instance=\"metrics-test\",rank=\"pp0/tp1\"} 1.0")
                .contains("kvpager_rank_handles{instance=\"metrics-test\",rank=\"pp0/tp1\"}")
                .contains("kvpager_cache_ready{instance=\"metrics-test\"} 1.0")
                .contains("vertx_eventbus_");
    }

    @Test
    void timesMapsPerRankAndCountsRankFailuresByCode() throws Exception {
        // Every map on pp0/tp1 of this second cache runs out of memory: its allocations miss.
        JsonArray faults = new JsonArray().add(new JsonObject().put("op", "map").put("rank", "pp0/tp1")
                .put("error", "CUDA_ERROR_OUT_OF_MEMORY"));
        KvCache failing = KvCache.deploy(vertx, options("metrics-oom", faults)).await(30, TimeUnit.SECONDS);
        endpoint.close();
        endpoint = MetricsEndpoint.listen(vertx, 0, List.of(cache, failing));
        try {
            assertThat(cache.alloc(150).await(10, TimeUnit.SECONDS).isMiss()).isFalse();
            Allocation miss = failing.alloc(1).await(10, TimeUnit.SECONDS);
            assertThat(miss.missReason()).isEqualTo(MissReason.OUT_OF_MEMORY);
            String body = get("/metrics").bodyAsString();
            assertThat(body)
                    .containsPattern("kvpager_rank_calls_seconds_count\\{action=\"map\",instance=\"metrics-test\",outcome=\"ok\",rank=\"pp0/tp0\"} [1-9]")
                    .containsPattern("kvpager_rank_calls_seconds_count\\{action=\"map\",instance=\"metrics-test\",outcome=\"ok\",rank=\"pp0/tp1\"} [1-9]")
                    .containsPattern("kvpager_rank_calls_seconds_count\\{action=\"map\",instance=\"metrics-oom\",outcome=\"failed\",rank=\"pp0/tp1\"} [1-9]")
                    .containsPattern("kvpager_rank_failures_total\\{action=\"map\",code=\"OUT_OF_MEMORY\",instance=\"metrics-oom\",rank=\"pp0/tp1\"} [1-9]")
                    .doesNotContain("kvpager_rank_failures_total{action=\"map\",code=\"OUT_OF_MEMORY\",instance=\"metrics-oom\",rank=\"pp0/tp0\"}");
        } finally {
            failing.close().await(30, TimeUnit.SECONDS);
        }
    }

    @Test
    void healthIsUpWhileEveryRankAnswers() throws Exception {
        HttpResponse<Buffer> response = get("/health");
        assertThat(response.statusCode()).isEqualTo(200);
        JsonObject health = response.bodyAsJsonObject();
        assertThat(health.getString("status")).isEqualTo("UP");
        assertThat(health.getJsonArray("checks").getJsonObject(0).getString("id")).isEqualTo("metrics-test");
    }

    @Test
    void healthIsDownOnceTheCacheIsClosed() throws Exception {
        cache.close().await(30, TimeUnit.SECONDS);
        HttpResponse<Buffer> response = get("/health");
        assertThat(response.statusCode()).isEqualTo(503);
        assertThat(response.bodyAsJsonObject().getString("status")).isEqualTo("DOWN");
    }
}
