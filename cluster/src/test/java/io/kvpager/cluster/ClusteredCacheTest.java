package io.kvpager.cluster;

import io.kvpager.Allocation;
import io.kvpager.FailureCode;
import io.kvpager.MissReason;
import io.kvpager.cache.CacheStats;
import io.kvpager.cache.KvCache;
import io.kvpager.cache.KvCacheOptions;
import io.kvpager.cache.RankStats;
import io.kvpager.cluster.process.RemoteRanks;
import io.kvpager.cluster.process.SpawnedNode;
import io.kvpager.cluster.process.TestClusters;
import io.kvpager.internal.membership.ClusterMembership;
import io.kvpager.sim.FaultPlan;
import io.kvpager.sim.SimOptions;
import io.kvpager.internal.membership.ClusterMembership;
import io.kvpager.worker.RankWorker;
import io.kvpager.worker.RankWorkerOptions;
import io.vertx.core.Future;
import io.vertx.core.eventbus.DeliveryOptions;
import io.vertx.core.eventbus.ReplyException;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;

import static io.kvpager.cluster.process.TestClusters.await;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * A TP=2 cache whose coordinator runs in the test's JVM and whose two ranks run in processes of
 * their own, on simulated GPUs: allocation and free across processes; one rank killed with SIGKILL
 * while its map is in flight, noticed through the cluster's membership long before the send
 * timeout; nothing left on the surviving rank; the rank restarted, after which allocation works
 * again.
 */
@Timeout(value = 150, unit = TimeUnit.SECONDS)
class ClusteredCacheTest {

    private static final String INSTANCE = "it";
    private static final long BLOCK_BYTES = 64 << 10;
    private static final int BLOCKS_PER_PAGE = 32;
    /** Far above every bound the test waits with: a failure that came by timeout would fail the test. */
    private static final long SEND_TIMEOUT_MS = 120_000;
    private static final Duration START = Duration.ofSeconds(90);
    /** Pages held before the rank dies. */
    private static final int HELD = 5;
    /** pp0/tp1's map calls (one per page id) before the one that hangs, so that a request is in flight when it dies. */
    private static final int MAPS_BEFORE_HANG = HELD + 1;

    private final List<SpawnedNode> spawned = new ArrayList<>();
    private ClusterNode here;

    @AfterEach
    void tearDown() {
        TestClusters.closeAll(here, spawned);
    }

    @Test
    void ranksInOtherProcessesServeTheCacheAndAKilledOneIsNoticedAndComesBack() {
        here = TestClusters.startHere(TestClusters.freshName("kvpager-it"));
        Map<String, Long> leftAt = new ConcurrentHashMap<>();
        ClusterMembership.of(here.vertx()).subscribe(here.vertx().getOrCreateContext(), node -> leftAt.put(node, System.nanoTime()));

        SpawnedNode tp0 = spawn("tp0", worker(0, new JsonArray()));
        SpawnedNode tp1 = spawn("tp1", worker(1, new JsonArray().add(new JsonObject().put("op", "map")
                .put("nth", MAPS_BEFORE_HANG + 1).put("hang", true))));
        tp0.awaitReady(START);
        String tp1Node = tp1.awaitReady(START);

        KvCache cache = await(KvCache.deploy(here.vertx(), options()));
        CacheStats started = await(cache.stats());
        assertThat(started.healthy()).isTrue();
        assertThat(started.gpus()).extracting(g -> g.gpu()).allSatisfy(gpu -> assertThat(gpu).startsWith("sim:" + INSTANCE + ":"));

        // allocation and free across processes: one page id each, mapped on both ranks
        List<Allocation> held = new ArrayList<>();
        for (int i = 0; i < HELD; i++) {
            held.add(allocated(cache, BLOCKS_PER_PAGE));
        }
        Allocation extra = allocated(cache, BLOCKS_PER_PAGE);
        await(cache.free(extra));
        await().atMost(Duration.ofSeconds(30)).until(() -> mappedOn(0) == HELD && mappedOn(1) == HELD);
        assertThat(await(cache.stats()).pool().mappedPages()).isEqualTo(HELD);

        // a message from another node is checked exactly as a local one
        ReplyException bad = (ReplyException) failure(request(0, "map", new JsonObject().put("pp", 0).put("tp", 0)
                .put("group", 0).put("pages", new JsonArray().add(99)).put("requestId", "bad-1").put("owner", here.nodeId() + "#1")));
        assertThat(bad.failureCode()).isEqualTo(FailureCode.BAD_REQUEST.code());
        assertThat(bad.getMessage()).startsWith("pp0/tp0 group 0: ").contains("99");

        // the next map hangs on pp0/tp1: it is in flight when the rank is killed
        Future<Allocation> inFlight = cache.alloc(BLOCKS_PER_PAGE);
        await().atMost(Duration.ofSeconds(30)).until(() -> mappedOn(0) == HELD + 1);
        assertThat(inFlight.isComplete()).isFalse();
        long killed = System.nanoTime();
        tp1.kill();

        Allocation miss = await(inFlight);
        long failedAt = System.nanoTime();
        assertThat(miss.missReason()).isEqualTo(MissReason.RANK_DOWN);
        assertThat(miss.detail()).contains("pp0/tp1 NO_RANK", "pp0/tp1 left the cluster", tp1Node,
                "unmap again on pp0/tp0");
        assertThat(leftAt).containsKey(tp1Node);
        System.out.printf("pp0/tp1 killed: member removed after %d ms, the map in flight failed %d ms after that%n",
                (leftAt.get(tp1Node) - killed) / 1_000_000, (failedAt - leftAt.get(tp1Node)) / 1_000_000);

        // nothing left on the survivor: the page of the failed batch was unmapped again
        assertThat(mappedOn(0)).isEqualTo(HELD);
        CacheStats down = await(cache.stats());
        assertThat(down.healthy()).isFalse();
        RankStats lost = down.rank("pp0/tp1");
        assertThat(lost.up()).isFalse();
        assertThat(lost.failure().code()).isEqualTo(FailureCode.NO_RANK);
        assertThat(lost.failure().message()).contains("pp0/tp1 is down", tp1Node);
        assertThat(down.rank("pp0/tp0").mappedPages()).isEqualTo(down.pool().mappedPages()).isEqualTo(HELD);
        RemoteRanks.invariantsHold(cache);

        // every allocation misses while the rank is down, even one without a map
        await(cache.free(held.removeLast()));
        Allocation whileDown = await(cache.alloc(1));
        assertThat(whileDown.missReason()).isEqualTo(MissReason.RANK_DOWN);
        assertThat(whileDown.detail()).contains("pp0/tp1");
        assertThat(await(cache.stats()).pool().misses()).containsEntry(MissReason.RANK_DOWN, 2L);

        // a worker for the rank joins again: it gets the tensors and the pages mapped, and allocation works
        SpawnedNode again = spawn("tp1-again", worker(1, new JsonArray()));
        again.awaitReady(START);
        Allocation back = allocated(cache, 2 * BLOCKS_PER_PAGE);
        held.add(back);
        // the page freed while the rank was down is unmapped in the background, now that every rank is back
        await().atMost(Duration.ofSeconds(30)).until(() -> everyRankHoldsThePool(await(cache.stats())));
        RemoteRanks.invariantsHold(cache);

        for (Allocation a : held) {
            await(cache.free(a));
        }
        await(cache.trim());
        await().atMost(Duration.ofSeconds(30)).until(() -> mappedOn(0) == 0 && mappedOn(1) == 0);
        // the idle handles the last unmaps left go back a period after the unmaps stopped
        await().atMost(Duration.ofSeconds(30)).untilAsserted(() -> assertThat(await(cache.stats()).gpus())
                .allSatisfy(g -> assertThat(g.heldBytes()).as(g.gpu()).isZero()));
        await(cache.close());
    }

    private static boolean everyRankHoldsThePool(CacheStats stats) {
        return stats.healthy() && stats.ranks().stream().allMatch(r -> r.mappedPages() == stats.pool().mappedPages());
    }

    private SpawnedNode spawn(String name, JsonObject worker) {
        SpawnedNode node = SpawnedNode.spawn(name, TestClusters.spec(here, new JsonArray().add(worker), new JsonArray()));
        spawned.add(node);
        return node;
    }

    private static JsonObject worker(int tp, JsonArray faults) {
        SimOptions sim = SimOptions.defaults().withGpuKey(INSTANCE).withCapacityBytes(1L << 30).withFaults(FaultPlan.parse(faults).faults());
        return new RankWorkerOptions().setInstance(INSTANCE).setPp(0).setTp(tp).setGpu(tp).setSim(sim).setSendTimeoutMs(SEND_TIMEOUT_MS).toJson();
    }

    private static KvCacheOptions options() {
        return new KvCacheOptions().setInstance(INSTANCE).setTp(2).setLayers(2).setKvBuffers(2).setBlockBytes(BLOCK_BYTES)
                .setPages(16).setReserveLow(0).setReserveHigh(0).setAdaptiveReserve(false).setRefillIntervalMs(5)
                .setSendTimeoutMs(SEND_TIMEOUT_MS).setTensorsDeadlineMs(60_000).setTensorsPollMs(20).setLocalWorkers(false);
    }

    private static Allocation allocated(KvCache cache, int blocks) {
        Allocation a = await(cache.alloc(blocks));
        assertThat(a.isMiss()).as(a.detail()).isFalse();
        return a;
    }

    /** Pages of group 0 mapped on rank {@code tp}, asked straight from its worker. */
    private long mappedOn(int tp) {
        JsonObject stats = await(request(tp, "stats", new JsonObject()));
        return stats.getJsonObject("groups").getJsonObject("0", new JsonObject()).getLong("mappedPages", 0L);
    }

    private Future<JsonObject> request(int tp, String action, JsonObject body) {
        return here.vertx().eventBus().<JsonObject>request(RankWorker.address(INSTANCE, 0, tp), body,
                new DeliveryOptions().addHeader("action", action).setSendTimeout(10_000)).map(m -> m.body());
    }

    private static Throwable failure(Future<?> future) {
        try {
            future.await(30, TimeUnit.SECONDS);
        } catch (Exception e) {
            return e;
        }
        throw new AssertionError("the future succeeded: " + future.result());
    }
}
