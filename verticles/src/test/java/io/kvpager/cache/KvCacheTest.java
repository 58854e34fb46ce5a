package io.kvpager.cache;

import io.kvpager.Allocation;
import io.kvpager.LimitResult;
import io.kvpager.MissReason;
import io.kvpager.device.HandlePoolOptions;
import io.kvpager.internal.CoordinatorView;
import io.kvpager.internal.CoordinatorView;
import io.kvpager.worker.RankWorker;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.eventbus.DeliveryOptions;
import io.vertx.core.eventbus.Message;
import io.vertx.core.json.JsonObject;
import io.vertx.junit5.VertxExtension;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;

import static io.kvpager.cache.SimPool.BLOCKS_PER_PAGE;
import static io.kvpager.cache.SimPool.PAGE_ID_BYTES;
import static io.kvpager.cache.SimPool.accounting;
import static io.kvpager.cache.SimPool.await;
import static io.kvpager.cache.SimPool.failure;
import static io.kvpager.cache.SimPool.options;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/** A TP=4 cache with its workers on simulated GPUs, through the public API. */
@ExtendWith(VertxExtension.class)
class KvCacheTest {

    private static Set<Integer> pagesOf(Allocation a) {
        Set<Integer> pages = new TreeSet<>();
        for (int i = 0; i < a.size(); i++) {
            pages.add(a.block(i) / BLOCKS_PER_PAGE);
        }
        return pages;
    }

    private static void everyRankMaps(KvCache cache, int pages) {
        SimPool.invariantsHold(cache);
        CacheStats stats = await(cache.stats());
        assertThat(stats.healthy()).isTrue();
        assertThat(stats.pool().mappedPages()).isEqualTo(pages);
        for (RankStats rank : stats.ranks()) {
            assertThat(rank.mappedPages()).as(rank.rank()).isEqualTo(pages);
            assertThat(rank.handles()).as(rank.rank()).isEqualTo(pages);
        }
    }

    private static void awaitReserve(KvCache cache, int pages) {
        await().atMost(Duration.ofSeconds(10))
                .untilAsserted(() -> assertThat(await(cache.stats()).pool().reservePages()).isEqualTo(pages));
    }

    @Test
    void allocatesFreesAndReusesPagesFromTheReserve(Vertx vertx) {
        String name = "kv-reuse";
        KvCache cache = await(KvCache.deploy(vertx, options(name).setReserveLow(2).setReserveHigh(4)));
        awaitReserve(cache, 4);
        assertThat(await(cache.stats()).pool().maps()).isEqualTo(4);

        Allocation first = await(cache.alloc(40));
        assertThat(first.isMiss()).isFalse();
        assertThat(first.size()).isEqualTo(40);
        assertThat(pagesOf(first)).hasSize(2);
        CacheStats afterAlloc = await(cache.stats());
        assertThat(afterAlloc.pool().maps()).as("served from the reserve, nothing mapped").isEqualTo(4);
        assertThat(afterAlloc.pool().inUsePages()).isEqualTo(2);
        assertThat(afterAlloc.pool().usedBlocks()).isEqualTo(40);

        await(cache.free(first));
        Allocation again = await(cache.alloc(40));
        assertThat(pagesOf(again)).isEqualTo(pagesOf(first));
        assertThat(await(cache.stats()).pool().maps()).isEqualTo(4);
        everyRankMaps(cache, 4);
        assertThat(accounting(name, 4)).containsOnly(
                "gpu 0: 4 handles, " + 4 * PAGE_ID_BYTES + " bytes", "gpu 1: 4 handles, " + 4 * PAGE_ID_BYTES + " bytes",
                "gpu 2: 4 handles, " + 4 * PAGE_ID_BYTES + " bytes", "gpu 3: 4 handles, " + 4 * PAGE_ID_BYTES + " bytes");

        await(cache.close());
        assertThat(accounting(name, 4)).containsOnly("gpu 0: 0 handles, 0 bytes", "gpu 1: 0 handles, 0 bytes",
                "gpu 2: 0 handles, 0 bytes", "gpu 3: 0 handles, 0 bytes");
        assertThat(vertx.deploymentIDs()).isEmpty();
    }

    @Test
    void anAllocationBeyondTheReserveMapsNewPagesOnEveryRank(Vertx vertx) {
        KvCache cache = await(KvCache.deploy(vertx, options("kv-map")));
        Allocation a = await(cache.alloc(3 * BLOCKS_PER_PAGE));
        assertThat(pagesOf(a)).containsExactly(0, 1, 2);
        everyRankMaps(cache, 3);
        assertThat(await(cache.availableBlocks())).isEqualTo((SimPool.PAGES - 3) * BLOCKS_PER_PAGE);
        await(cache.free(a));
        // no reserve: the emptied pages go as soon as the background runs
        await().atMost(Duration.ofSeconds(10)).untilAsserted(() -> everyRankMaps(cache, 0));
        await(cache.close());
    }

    @Test
    void limitsApplyDeferGoStaleAndConflict(Vertx vertx) {
        KvCache cache = await(KvCache.deploy(vertx, options("kv-limit")));
        LimitResult two = await(cache.setMemoryLimit(2 * PAGE_ID_BYTES, 1));
        assertThat(two.outcome()).isEqualTo(LimitResult.Outcome.APPLIED);
        assertThat(two.effectivePages()).isEqualTo(2);

        Allocation tooMuch = await(cache.alloc(3 * BLOCKS_PER_PAGE));
        assertThat(tooMuch.missReason()).isEqualTo(MissReason.LIMIT);
        JsonObject beforeFreeingTheMiss = await(cache.stats()).pool().toJson();
        await(cache.free(tooMuch));
        assertThat(await(cache.stats()).pool().toJson()).as("a miss holds no blocks: freeing it changes nothing")
                .isEqualTo(beforeFreeingTheMiss);
        Allocation a = await(cache.alloc(BLOCKS_PER_PAGE));
        Allocation b = await(cache.alloc(BLOCKS_PER_PAGE));
        assertThat(await(cache.alloc(1)).missReason()).isEqualTo(MissReason.LIMIT);

        assertThat(await(cache.setMemoryLimit(8 * PAGE_ID_BYTES, 0)).outcome()).isEqualTo(LimitResult.Outcome.STALE);
        assertThat(await(cache.setMemoryLimit(3 * PAGE_ID_BYTES, 1)).outcome()).isEqualTo(LimitResult.Outcome.CONFLICT);
        LimitResult one = await(cache.setMemoryLimit(PAGE_ID_BYTES, 2));
        assertThat(one.outcome()).isEqualTo(LimitResult.Outcome.DEFERRED);
        assertThat(one.inUsePages()).isEqualTo(2);

        await(cache.free(a));
        await().atMost(Duration.ofSeconds(10)).untilAsserted(() -> everyRankMaps(cache, 1));
        assertThat(await(cache.alloc(1)).missReason()).isEqualTo(MissReason.LIMIT);

        assertThat(await(cache.setMemoryLimit(4 * PAGE_ID_BYTES, 3)).outcome()).isEqualTo(LimitResult.Outcome.APPLIED);
        assertThat(await(cache.alloc(BLOCKS_PER_PAGE)).isMiss()).isFalse();
        await(cache.free(b));
        await(cache.close());
    }

    @Test
    void aConfiguredLimitIsRevisionZero(Vertx vertx) {
        KvCache cache = await(KvCache.deploy(vertx, options("kv-limit0").setMemoryLimitBytes(PAGE_ID_BYTES)));
        assertThat(await(cache.alloc(BLOCKS_PER_PAGE + 1)).missReason()).isEqualTo(MissReason.LIMIT);
        assertThat(await(cache.setMemoryLimit(2 * PAGE_ID_BYTES, 0)).outcome()).isEqualTo(LimitResult.Outcome.CONFLICT);
        assertThat(await(cache.setMemoryLimit(2 * PAGE_ID_BYTES, 1)).outcome()).isEqualTo(LimitResult.Outcome.APPLIED);
        assertThat(await(cache.alloc(BLOCKS_PER_PAGE + 1)).isMiss()).isFalse();
        await(cache.close());
    }

    @Test
    void aLimitWithoutARevisionTakesTheNextOneAndAppliesAfterAnyOther(Vertx vertx) {
        KvCache cache = await(KvCache.deploy(vertx, options("kv-limit-next")));
        assertThat(await(cache.setMemoryLimit(PAGE_ID_BYTES, 1L << 62)).outcome()).isEqualTo(LimitResult.Outcome.APPLIED);
        assertThat(failure(cache.setMemoryLimit(PAGE_ID_BYTES, Long.MAX_VALUE))).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("at most 4611686018427387904");
        LimitResult next = await(cache.setMemoryLimit(3 * PAGE_ID_BYTES));
        assertThat(next.outcome()).isEqualTo(LimitResult.Outcome.APPLIED);
        assertThat(next.revision()).isEqualTo((1L << 62) + 1);
        assertThat(next.effectivePages()).isEqualTo(3);
        assertThat(failure(cache.setMemoryLimit(-1))).isInstanceOf(IllegalArgumentException.class);
        assertThat(await(cache.stats()).pool().limitPages()).isEqualTo(3);
        await(cache.close());
    }

    @Test
    void trimUnmapsTheReserveUntilTheNextAllocation(Vertx vertx) {
        String name = "kv-trim";
        KvCache cache = await(KvCache.deploy(vertx, options(name).setReserveLow(2).setReserveHigh(4)));
        awaitReserve(cache, 4);
        await(cache.trim());
        everyRankMaps(cache, 0);
        assertThat(accounting(name, 4)).containsOnly("gpu 0: 0 handles, 0 bytes", "gpu 1: 0 handles, 0 bytes",
                "gpu 2: 0 handles, 0 bytes", "gpu 3: 0 handles, 0 bytes");

        Allocation a = await(cache.alloc(1));
        assertThat(a.isMiss()).isFalse();
        awaitReserve(cache, 4);
        everyRankMaps(cache, 5);
        await(cache.close());
    }

    @Test
    void aPageFreedUnderAnOpenFenceStaysMappedUntilTheFenceRetires(Vertx vertx) {
        String name = "kv-fence";
        KvCache cache = await(KvCache.deploy(vertx, options(name)));
        long fence = await(cache.fence());
        Allocation a = await(cache.alloc(1));
        await(cache.free(a));
        // trim unmaps every idle page a fence does not hold; this one it holds
        await(cache.trim());
        CacheStats held = await(cache.stats());
        assertThat(held.pool().reclaimedPages()).isEqualTo(1);
        everyRankMaps(cache, 1);

        // until then it may be reused
        Allocation reused = await(cache.alloc(1));
        assertThat(pagesOf(reused)).isEqualTo(pagesOf(a));
        assertThat(await(cache.stats()).pool().maps()).isEqualTo(1);
        await(cache.free(reused));
        everyRankMaps(cache, 1);

        await(cache.retired(fence));
        everyRankMaps(cache, 0);
        assertThat(accounting(name, 4)).containsOnly("gpu 0: 0 handles, 0 bytes", "gpu 1: 0 handles, 0 bytes",
                "gpu 2: 0 handles, 0 bytes", "gpu 3: 0 handles, 0 bytes");
        assertThat(failure(cache.retired(fence))).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("fence " + fence + " is already retired");
        await(cache.close());
    }

    @Test
    void badArgumentsFailAndChangeNothing(Vertx vertx) {
        KvCache cache = await(KvCache.deploy(vertx, options("kv-bad")));
        Allocation a = await(cache.alloc(3));
        JsonObject before = await(cache.stats()).pool().toJson();

        assertThat(failure(cache.alloc(0))).isInstanceOf(IllegalArgumentException.class).hasMessageContaining("cannot allocate 0 blocks");
        assertThat(failure(cache.alloc(-4))).isInstanceOf(IllegalArgumentException.class);
        assertThat(failure(cache.alloc(SimPool.PAGES * BLOCKS_PER_PAGE + 1))).isInstanceOf(IllegalArgumentException.class);
        assertThat(failure(cache.free(List.of(a.block(0), 100)))).isInstanceOf(IllegalArgumentException.class);
        assertThat(failure(cache.free(List.of(a.block(0), a.block(0))))).isInstanceOf(IllegalArgumentException.class);
        assertThat(failure(cache.free(Arrays.asList(a.block(0), null)))).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("block id 1 of 2 to free is null");
        assertThat(failure(cache.free((List<Integer>) null))).isInstanceOf(IllegalArgumentException.class);
        assertThat(failure(cache.free((Allocation) null))).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("an allocation to free is required");
        assertThat(failure(cache.retired(42))).isInstanceOf(IllegalArgumentException.class).hasMessageContaining("never opened");
        assertThat(failure(cache.setMemoryLimit(-1, 1))).isInstanceOf(IllegalArgumentException.class);
        assertThat(failure(cache.setMemoryLimit(PAGE_ID_BYTES, -1))).isInstanceOf(IllegalArgumentException.class);

        assertThat(await(cache.stats()).pool().toJson()).isEqualTo(before);
        await(cache.free(a));
        await(cache.close());
        assertThat(failure(cache.alloc(1))).isInstanceOf(KvPagerException.class).hasMessageContaining("closed");
        assertThat(await(cache.close())).isNull();
    }

    @Test
    void closeSurvivesWorkersUndeployedFromOutsideAndAnswersEveryCallTheSame(Vertx vertx) {
        KvCache cache = await(KvCache.deploy(vertx, options("kv-outside")));
        Allocation a = await(cache.alloc(3));
        assertThat(a.isMiss()).isFalse();
        String coordinator = CoordinatorView.of(cache).context().deploymentID();
        List<String> workers = new ArrayList<>(vertx.deploymentIDs());
        workers.remove(coordinator);
        assertThat(workers).hasSize(4);
        // two of the cache's workers stopped by someone else: they gave their memory back themselves
        await(vertx.undeploy(workers.get(1)));
        await(vertx.undeploy(workers.get(3)));

        Future<Void> first = cache.close();
        Future<Void> second = cache.close();
        assertThat(await(first)).isNull();
        // one close: the second call is answered with the first one's outcome, on its own context
        assertThat(await(second)).isNull();
        assertThat(vertx.deploymentIDs()).isEmpty();
        assertThat(await(cache.close())).isNull();
        assertThat(failure(cache.alloc(1))).isInstanceOf(KvPagerException.class).hasMessageContaining("closed");
    }

    @Test
    void thePoolsStageAndGroupReachEveryWorkerUnchanged(Vertx vertx) {
        String name = "kv-pp";
        List<JsonObject> sent = new ArrayList<>();
        vertx.eventBus().addOutboundInterceptor(delivery -> {
            Message<?> m = delivery.message();
            if (m.address().startsWith("kvpager." + name + ".pp") && m.body() instanceof JsonObject body) {
                synchronized (sent) {
                    sent.add(body.copy().put("address", m.address()).put("action", m.headers().get("action")));
                }
            }
            delivery.next();
        });
        KvCache cache = await(KvCache.deploy(vertx, options(name).setPp(2).setTp(2).setGroup(1007)));
        Allocation a = await(cache.alloc(1));
        assertThat(a.isMiss()).isFalse();

        List<JsonObject> requests;
        synchronized (sent) {
            requests = List.copyOf(sent);
        }
        List<String> maps = new ArrayList<>();
        for (JsonObject r : requests) {
            String address = r.getString("address");
            assertThat(address).isEqualTo("kvpager." + name + ".pp" + r.getInteger("pp") + ".tp" + r.getInteger("tp"));
            if (!"stats".equals(r.getString("action"))) {
                assertThat(r.getInteger("group")).as(r.encode()).isEqualTo(1007);
            }
            if ("map".equals(r.getString("action"))) {
                maps.add(address);
            }
        }
        assertThat(maps).containsExactlyInAnyOrder("kvpager.kv-pp.pp0.tp0", "kvpager.kv-pp.pp0.tp1",
                "kvpager.kv-pp.pp1.tp0", "kvpager.kv-pp.pp1.tp1");
        CacheStats stats = await(cache.stats());
        assertThat(stats.ranks()).extracting(RankStats::rank).containsExactly("pp0/tp0", "pp0/tp1", "pp1/tp0", "pp1/tp1");
        assertThat(stats.ranks()).allSatisfy(r -> assertThat(r.mappedPages()).isEqualTo(1));
        await(cache.close());
    }

    @Test
    void theHandlePoolOptionReachesEveryWorker(Vertx vertx) {
        String name = "kv-handle-pool";
        KvCache cache = await(KvCache.deploy(vertx, options(name).setTp(2).setGroup(5).setHandlePool(new HandlePoolOptions(1, 2))));
        for (int tp = 0; tp < 2; tp++) {
            JsonObject stats = await(vertx.eventBus().<JsonObject>request(RankWorker.address(name, 0, tp), new JsonObject(),
                    new DeliveryOptions().addHeader("action", "stats"))).body();
            assertThat(stats.getJsonObject("groups").getJsonObject("5").getJsonObject("handlePool")).as("tp" + tp)
                    .isEqualTo(new JsonObject().put("prefillPages", 1).put("boundPages", 2).put("idlePages", 0));
        }
        await(cache.close());
    }

    @Test
    void aCacheOfOneStageOnlyTouchesThatStage(Vertx vertx) {
        String name = "kv-stage";
        KvCache cache = await(KvCache.deploy(vertx, options(name).setPp(2).setTp(2).setStages(List.of(1)).setGroup(3)));
        await(cache.alloc(1));
        CacheStats stats = await(cache.stats());
        assertThat(stats.stages()).containsExactly(1);
        assertThat(stats.ranks()).extracting(RankStats::rank).containsExactly("pp1/tp0", "pp1/tp1");
        assertThat(vertx.deploymentIDs()).hasSize(3);
        await(cache.close());
    }

    @Test
    void statsShowThePoolAndEveryRank(Vertx vertx) {
        KvCache cache = await(KvCache.deploy(vertx, options("kv-stats")));
        await(cache.alloc(BLOCKS_PER_PAGE + 1));
        CacheStats stats = await(cache.stats());
        assertThat(stats.state()).isEqualTo(CacheState.READY);
        assertThat(stats.instance()).isEqualTo("kv-stats");
        assertThat(stats.pool().inUsePages()).isEqualTo(2);
        assertThat(stats.pool().bytesPerPage()).isEqualTo(PAGE_ID_BYTES);
        assertThat(stats.pool().mappedBytesPerRank()).isEqualTo(2 * PAGE_ID_BYTES);
        for (RankStats r : stats.ranks()) {
            assertThat(r.up()).isTrue();
            assertThat(r.device()).contains("sim");
            assertThat(r.deviceUsedBytes()).isEqualTo(2 * PAGE_ID_BYTES);
            assertThat(r.deviceTotalBytes()).isEqualTo(1L << 30);
            assertThat(r.deviceFreeBytes()).isEqualTo((1L << 30) - 2 * PAGE_ID_BYTES);
        }
        JsonObject json = stats.toJson();
        assertThat(json.getJsonObject("pool").getInteger("inUsePages")).isEqualTo(2);
        assertThat(json.getJsonArray("ranks")).hasSize(4);
        await(cache.close());
    }
}
