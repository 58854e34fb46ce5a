package io.kvpager.cluster;

import io.kvpager.Allocation;
import io.kvpager.cache.KvCache;
import io.kvpager.cache.CacheState;
import io.kvpager.MissReason;
import io.kvpager.cache.CacheStats;
import io.kvpager.cache.KvCacheOptions;
import io.kvpager.cluster.process.RemoteRanks;
import io.kvpager.cluster.process.SpawnedNode;
import io.kvpager.cluster.process.TestClusters;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

import static io.kvpager.cluster.process.TestClusters.await;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * A TP=2 cache whose ranks run in processes of their own, one of which is stuck in a map far past
 * the send timeout: the allocation answers within 1.2x the send timeout naming the rank with
 * {@code TIMEOUT}, not sooner (the rank's liveness probe is answered: its process runs), nothing waits for a compensation, and once the rank comes back the quarantine
 * sweep releases the batch on both ranks, after which the ledger, the workers and their devices
 * agree and the next allocation works.
 */
@Timeout(value = 150, unit = TimeUnit.SECONDS)
class HungRankTest {

    private static final String INSTANCE = "hung";
    private static final int BLOCKS_PER_PAGE = 32;
    private static final long SEND_TIMEOUT_MS = 2_000;
    /** How long pp0/tp1's map is stuck: well past a send timeout, and past two. */
    private static final long STUCK_MS = 3 * SEND_TIMEOUT_MS;
    private static final Duration START = Duration.ofSeconds(90);

    private final List<SpawnedNode> spawned = new ArrayList<>();
    private ClusterNode here;

    @AfterEach
    void tearDown() {
        TestClusters.closeAll(here, spawned);
    }

    @Test
    void anAllocationMeetingAStuckRankAnswersWithinTheSendTimeoutAndTheBatchComesBackLater() {
        here = TestClusters.startHere(TestClusters.freshName("kvpager-hung"));
        SpawnedNode tp0 = spawn("hung-tp0", worker(0, new JsonArray()));
        // the second map call on pp0/tp1 (the first is the warm-up allocation's) is stuck
        SpawnedNode tp1 = spawn("hung-tp1", worker(1, new JsonArray().add(new JsonObject().put("op", "map")
                .put("nth", 2).put("delayMs", STUCK_MS))));
        tp0.awaitReady(START);
        tp1.awaitReady(START);
        KvCache cache = await(KvCache.deploy(here.vertx(), options()));
        Allocation warm = await(cache.alloc(BLOCKS_PER_PAGE));
        assertThat(warm.isMiss()).as(warm.detail()).isFalse();

        long began = System.nanoTime();
        Allocation miss = await(cache.alloc(BLOCKS_PER_PAGE));
        long tookMs = (System.nanoTime() - began) / 1_000_000;
        System.out.printf("an allocation meeting a stuck rank answered after %d ms (send timeout %d ms)%n", tookMs, SEND_TIMEOUT_MS);
        // the liveness probe, sent after 1 s, is answered (the rank's process runs, its thread is in the
        // map): a long map is not taken for a pause, and the send timeout names it
        assertThat(tookMs).as("ms to answer").isBetween(SEND_TIMEOUT_MS, SEND_TIMEOUT_MS * 6 / 5);
        assertThat(miss.detail()).doesNotContain("liveness probe");
        assertThat(miss.missReason()).isEqualTo(MissReason.MAP_FAILED);
        assertThat(miss.detail()).contains("pp0/tp1 TIMEOUT", "pp0/tp1 did not answer map within " + SEND_TIMEOUT_MS + " ms",
                "page 1 quarantined");
        assertThat(await(cache.stats()).pool().quarantinedPages()).isEqualTo(1);

        // the rank comes back by itself: the sweep's release, queued behind the stuck map there, frees the page
        await().atMost(Duration.ofSeconds(30)).untilAsserted(() -> {
            CacheStats stats = await(cache.stats());
            assertThat(stats.pool().quarantinedPages()).isZero();
            assertThat(stats.state()).isEqualTo(CacheState.READY);
            assertThat(stats.ranks()).allSatisfy(r -> assertThat(r.mappedPages()).as(r.rank()).isEqualTo(stats.pool().mappedPages()));
        });
        assertThat(mappedOn(0)).isEqualTo(1);
        assertThat(mappedOn(1)).isEqualTo(1);
        RemoteRanks.invariantsHold(cache);

        Allocation next = await(cache.alloc(BLOCKS_PER_PAGE));
        assertThat(next.isMiss()).as(next.detail()).isFalse();
        await(cache.free(next));
        await(cache.free(warm));
        await(cache.trim());
        await().atMost(Duration.ofSeconds(10)).until(() -> mappedOn(0) == 0 && mappedOn(1) == 0);
        // the idle handles the last unmaps left go back a period after the unmaps stopped
        await().atMost(Duration.ofSeconds(10)).untilAsserted(() -> assertThat(await(cache.stats()).gpus())
                .allSatisfy(g -> assertThat(g.heldBytes()).as(g.gpu()).isZero()));
        await(cache.close());
    }

    private long mappedOn(int tp) {
        return RemoteRanks.mappedOn(here.vertx(), INSTANCE, tp);
    }

    private SpawnedNode spawn(String name, JsonObject worker) {
        SpawnedNode node = SpawnedNode.spawn(name, TestClusters.spec(here, new JsonArray().add(worker), new JsonArray()));
        spawned.add(node);
        return node;
    }

    private static JsonObject worker(int tp, JsonArray faults) {
        return RemoteRanks.simWorker(INSTANCE, tp, faults, SEND_TIMEOUT_MS);
    }

    private static KvCacheOptions options() {
        return new KvCacheOptions().setInstance(INSTANCE).setTp(2).setLayers(2).setKvBuffers(2).setBlockBytes(64 << 10)
                .setPages(16).setReserveLow(0).setReserveHigh(0).setAdaptiveReserve(false).setRefillIntervalMs(5)
                .setSendTimeoutMs(SEND_TIMEOUT_MS).setTensorsDeadlineMs(60_000).setTensorsPollMs(20).setLocalWorkers(false);
    }
}
