package io.kvpager.cache;

import io.kvpager.Allocation;
import io.kvpager.sim.DriverCall;
import io.kvpager.sim.Fault;
import io.kvpager.sim.FaultPlan;
import io.vertx.core.Vertx;
import io.vertx.junit5.VertxExtension;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import java.time.Duration;

import static io.kvpager.cache.SimPool.accounting;
import static io.kvpager.cache.SimPool.await;
import static io.kvpager.cache.SimPool.device;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * The release of a page is one call: a free that empties a page the reserve has no room for, with
 * no fence open, unmaps it on every rank before it completes; no refill round or trim is needed
 * (the refill's timer is an hour here).
 */
@ExtendWith(VertxExtension.class)
class FreeReleaseTest {

    private static final long HOUR_MS = 3_600_000;

    /** The pool's options with no idle handles kept, so that an unmapped page leaves nothing on the device ({@link IdleHandlesTest} has those). */
    private static KvCacheOptions options(String name) {
        return SimPool.options(name).setIdleHandlePages(0);
    }

    private static void unmappedEverywhere(KvCache cache, String name) {
        SimPool.invariantsHold(cache);
        CacheStats stats = await(cache.stats());
        assertThat(stats.pool().mappedPages()).isZero();
        for (RankStats rank : stats.ranks()) {
            assertThat(rank.mappedPages()).as(rank.rank()).isZero();
        }
        assertThat(accounting(name, 4)).containsOnly("gpu 0: 0 handles, 0 bytes", "gpu 1: 0 handles, 0 bytes",
                "gpu 2: 0 handles, 0 bytes", "gpu 3: 0 handles, 0 bytes");
    }

    @Test
    void aFreeThatEmptiesAPageUnmapsItOnEveryRankBeforeItCompletes(Vertx vertx) {
        String name = "free-unmaps";
        KvCache cache = await(KvCache.deploy(vertx, options(name).setRefillIntervalMs(HOUR_MS)));
        Allocation a = await(cache.alloc(SimPool.BLOCKS_PER_PAGE + 1));
        assertThat(await(cache.stats()).pool().maps()).isEqualTo(2);

        await(cache.free(a));
        unmappedEverywhere(cache, name);
        CacheStats stats = await(cache.stats());
        assertThat(stats.pool().unmaps()).isEqualTo(2);
        assertThat(stats.pool().usedBlocks()).isZero();
        await(cache.close());
    }

    @Test
    void aPageTheReserveHasRoomForStaysMapped(Vertx vertx) {
        String name = "free-keeps";
        KvCache cache = await(KvCache.deploy(vertx, options(name).setReserveHigh(1).setRefillIntervalMs(HOUR_MS)));
        Allocation a = await(cache.alloc(2 * SimPool.BLOCKS_PER_PAGE));

        await(cache.free(a));
        CacheStats stats = await(cache.stats());
        assertThat(stats.pool().reservePages()).isEqualTo(1);
        assertThat(stats.pool().mappedPages()).as("the page the reserve had no room for is gone").isEqualTo(1);
        assertThat(stats.pool().unmaps()).isEqualTo(1);
        SimPool.invariantsHold(cache);

        await(cache.trim());
        unmappedEverywhere(cache, name);
        await(cache.close());
    }

    @Test
    void aFreeWhoseUnmapFailsStillFreesItsBlocksAndTheRefillReleasesThePage(Vertx vertx) {
        String name = "free-unmap-fails";
        KvCache cache = await(KvCache.deploy(vertx, options(name).setRefillIntervalMs(HOUR_MS)));
        Allocation a = await(cache.alloc(1));
        FaultPlan faults = device(name, 2, "pp0/tp2").faults();
        faults.add(Fault.error(DriverCall.UNMAP, "CUDA_ERROR_UNKNOWN").nth(1));

        await(cache.free(a));
        assertThat(faults.firedTotal()).as("the free's own unmap met the fault").isEqualTo(1);
        assertThat(await(cache.stats()).pool().usedBlocks()).as("the blocks are free whatever the unmap did").isZero();
        // the failed release woke the refill, whose own release finds the fault gone
        await().atMost(Duration.ofSeconds(10)).untilAsserted(() -> assertThat(await(cache.stats()).pool().mappedPages()).isZero());
        unmappedEverywhere(cache, name);
        Allocation again = await(cache.alloc(1));
        assertThat(again.isMiss()).isFalse();
        await(cache.free(again));
        unmappedEverywhere(cache, name);
        await(cache.close());
    }
}
