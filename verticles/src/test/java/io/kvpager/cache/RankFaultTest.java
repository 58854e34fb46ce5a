package io.kvpager.cache;

import io.kvpager.Allocation;
import io.kvpager.FailureCode;
import io.kvpager.MissReason;
import io.kvpager.sim.DriverCall;
import io.kvpager.sim.Fault;
import io.kvpager.sim.FaultPlan;
import io.vertx.core.Vertx;
import io.vertx.core.json.JsonObject;
import io.vertx.junit5.VertxExtension;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import java.time.Duration;
import java.util.Arrays;
import java.util.List;

import static io.kvpager.cache.SimPool.accounting;
import static io.kvpager.cache.SimPool.await;
import static io.kvpager.cache.SimPool.deployWorker;
import static io.kvpager.cache.SimPool.deployWorkers;
import static io.kvpager.cache.SimPool.device;
import static io.kvpager.cache.SimPool.options;
import static io.kvpager.cache.SimPool.pages;
import static io.kvpager.cache.SimPool.toRank;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * One of four ranks fails a map, each way a rank can fail: the allocation misses with that rank's
 * code and error, the other ranks unmap what they mapped, every simulated GPU holds what it held
 * before, and once the fault is gone the next allocation works.
 */
@ExtendWith(VertxExtension.class)
class RankFaultTest {

    /** Four workers deployed by the test, so that it can stop one; a cache without a reserve on them. */
    private record Setup(List<String> workers, KvCache cache, List<String> before) {
    }

    private static Setup setup(Vertx vertx, String name, long sendTimeoutMs) {
        List<String> workers = await(deployWorkers(vertx, name, 4));
        KvCache cache = await(KvCache.deploy(vertx, options(name).setLocalWorkers(false).setSendTimeoutMs(sendTimeoutMs)));
        return new Setup(workers, cache, accounting(name, 4));
    }

    private static void theNextAllocationWorks(Setup s) {
        SimPool.invariantsHold(s.cache());
        Allocation ok = await(s.cache().alloc(1));
        assertThat(ok.isMiss()).as(ok.toString()).isFalse();
        CacheStats stats = await(s.cache().stats());
        assertThat(stats.healthy()).isTrue();
        for (RankStats r : stats.ranks()) {
            assertThat(r.mappedPages()).as(r.rank()).isEqualTo(stats.pool().mappedPages());
        }
        await(s.cache().free(ok));
        SimPool.invariantsHold(s.cache());
        await(s.cache().close());
    }

    private static void nothingIsLeftMapped(Setup s, String name) {
        assertThat(accounting(name, 4)).isEqualTo(s.before());
        CacheStats stats = await(s.cache().stats());
        assertThat(stats.pool().mappedPages()).isZero();
        assertThat(stats.pool().usedBlocks()).isZero();
    }

    @Test
    void aDriverErrorOnOneRankIsAMapFailedMissNamingIt(Vertx vertx) {
        String name = "fault-500";
        Setup s = setup(vertx, name, 5_000);
        FaultPlan faults = device(name, 2, "pp0/tp2").faults();
        faults.add(Fault.error(DriverCall.MAP, "CUDA_ERROR_ILLEGAL_ADDRESS"));

        Allocation miss = await(s.cache().alloc(1));
        assertThat(miss.missReason()).isEqualTo(MissReason.MAP_FAILED);
        assertThat(miss.detail()).contains("map of page 0 in group 0 failed on 1 of 4 ranks", "pp0/tp2 DRIVER_ERROR (500)",
                "cuMemMap", "CUDA_ERROR_ILLEGAL_ADDRESS", "unmap again on pp0/tp0, pp0/tp1, pp0/tp3");
        nothingIsLeftMapped(s, name);

        faults.clear();
        theNextAllocationWorks(s);
    }

    @Test
    void outOfMemoryOnOneRankIsAnOutOfMemoryMiss(Vertx vertx) {
        String name = "fault-507";
        Setup s = setup(vertx, name, 5_000);
        FaultPlan faults = device(name, 1, "pp0/tp1").faults();
        faults.add(Fault.error(DriverCall.CREATE, "CUDA_ERROR_OUT_OF_MEMORY"));

        Allocation miss = await(s.cache().alloc(1));
        assertThat(miss.missReason()).isEqualTo(MissReason.OUT_OF_MEMORY);
        assertThat(miss.detail()).contains("pp0/tp1 OUT_OF_MEMORY (507)", "cuMemCreate", "CUDA_ERROR_OUT_OF_MEMORY");
        nothingIsLeftMapped(s, name);
        assertThat(await(s.cache().stats()).pool().misses()).containsEntry(MissReason.OUT_OF_MEMORY, 1L);

        faults.clear();
        theNextAllocationWorks(s);
    }

    @Test
    void aPageAlreadyMappedOnOneRankIsAConflict(Vertx vertx) {
        String name = "fault-409";
        Setup premapped = setup(vertx, name, 5_000);
        // as the cache's coordinator, the group's owner, whom the worker's stats name
        String owner = await(toRank(vertx, name, 0, 3, "stats", new JsonObject())).getJsonObject("groups").getJsonObject("0")
                .getString("owner");
        await(toRank(vertx, name, 0, 3, "map", pages(0, "test-premap", 0).put("owner", owner)));
        Setup s = new Setup(premapped.workers(), premapped.cache(), accounting(name, 4));

        Allocation miss = await(s.cache().alloc(1));
        assertThat(miss.missReason()).isEqualTo(MissReason.MAP_FAILED);
        assertThat(miss.detail()).contains("pp0/tp3 CONFLICT (409)", "page 0");
        assertThat(accounting(name, 4)).isEqualTo(s.before());
        assertThat(await(s.cache().stats()).pool().mappedPages()).isZero();

        await(toRank(vertx, name, 0, 3, "unmap", pages(0, "test-unmap", 0).put("owner", owner)));
        theNextAllocationWorks(s);
    }

    @Test
    void aRankThatHangsIsATimeoutNamingItWithinTheSendTimeoutAndIsReleasedInTheBackground(Vertx vertx) {
        String name = "fault-hang";
        // long enough that a loaded machine's stalls stay within the 20 % slack allowed
        long timeoutMs = 2_000;
        Setup s = setup(vertx, name, timeoutMs);
        FaultPlan faults = device(name, 1, "pp0/tp1").faults();
        faults.add(Fault.hang(DriverCall.MAP));
        try {
            long began = System.nanoTime();
            Allocation miss = await(s.cache().alloc(1));
            long tookMs = (System.nanoTime() - began) / 1_000_000;
            assertThat(tookMs).as("the caller waits one send timeout, not two").isLessThanOrEqualTo(timeoutMs * 6 / 5);
            assertThat(miss.missReason()).isEqualTo(MissReason.MAP_FAILED);
            assertThat(miss.detail()).contains("pp0/tp1 TIMEOUT", "pp0/tp1 did not answer map within " + timeoutMs + " ms",
                    "page 0 quarantined: what pp0/tp1 holds of it is unknown until it answers");
            CacheStats hung = await(s.cache().stats());
            assertThat(hung.pool().quarantinedPages()).isEqualTo(1);
            // the ranks that answered give the page back in the background, without waiting for the hung one
            await().atMost(Duration.ofSeconds(10)).untilAsserted(() -> {
                List<String> now = accounting(name, 4);
                assertThat(List.of(now.get(0), now.get(2), now.get(3)))
                        .isEqualTo(List.of(s.before().get(0), s.before().get(2), s.before().get(3)));
            });
            assertThat(await(s.cache().stats()).pool().quarantinedPages()).as("until pp0/tp1 answers").isEqualTo(1);
        } finally {
            faults.clear();
            faults.releaseHangs();
        }
        // the rank recovers: the sweep's release, queued behind the hung map there, brings the page back
        await().atMost(Duration.ofSeconds(20)).untilAsserted(() -> {
            assertThat(await(s.cache().stats()).pool().quarantinedPages()).isZero();
            assertThat(accounting(name, 4)).isEqualTo(s.before());
        });
        CacheStats recovered = await(s.cache().stats());
        assertThat(recovered.pool().freePages()).isEqualTo(SimPool.PAGES);
        assertThat(recovered.ranks()).allSatisfy(r -> assertThat(r.mappedPages()).as(r.rank()).isZero());
        SimPool.invariantsHold(s.cache());
        theNextAllocationWorks(s);
    }

    @Test
    void aRankThatCannotUndoItsPartQuarantinesTheBatchUntilTheSweepReleasesIt(Vertx vertx) {
        String name = "fault-partial";
        Setup s = setup(vertx, name, 5_000);
        FaultPlan faults = device(name, 2, "pp0/tp2").faults();
        faults.add(Fault.error(DriverCall.MAP, "CUDA_ERROR_UNKNOWN").onPage(1));
        faults.add(Fault.error(DriverCall.UNMAP, "CUDA_ERROR_UNKNOWN").onPage(0));

        Allocation miss = await(s.cache().alloc(2 * SimPool.BLOCKS_PER_PAGE));
        assertThat(miss.missReason()).isEqualTo(MissReason.MAP_FAILED);
        assertThat(miss.detail()).contains("pp0/tp2 DRIVER_ERROR (500)", "rollback incomplete",
                "unmap again on pp0/tp0, pp0/tp1, pp0/tp3", "pp0/tp2 could not undo its part: pages [0, 1] quarantined");
        // while the fault lasts, the sweep's release fails on pp0/tp2 at page 0 too: the pages stay quarantined
        assertThat(await(s.cache().stats()).pool().quarantinedPages()).isEqualTo(2);
        List<String> after = accounting(name, 4);
        assertThat(List.of(after.get(0), after.get(1), after.get(3)))
                .isEqualTo(List.of(s.before().get(0), s.before().get(1), s.before().get(3)));
        assertThat(after.get(2)).as("page 0 stays mapped on pp0/tp2").isNotEqualTo(s.before().get(2));

        faults.clear();
        await().atMost(Duration.ofSeconds(10))
                .untilAsserted(() -> assertThat(await(s.cache().stats()).pool().quarantinedPages()).isZero());
        assertThat(accounting(name, 4)).as("every GPU holds what the ledger does: nothing").isEqualTo(s.before());
        CacheStats swept = await(s.cache().stats());
        assertThat(swept.pool().freePages()).isEqualTo(SimPool.PAGES);
        assertThat(swept.ranks()).allSatisfy(r -> assertThat(r.mappedPages()).as(r.rank()).isZero());
        SimPool.invariantsHold(s.cache());

        Allocation ok = await(s.cache().alloc(2 * SimPool.BLOCKS_PER_PAGE));
        assertThat(ok.isMiss()).as(ok.toString()).isFalse();
        assertThat(Arrays.stream(ok.blocks()).map(b -> b / SimPool.BLOCKS_PER_PAGE).distinct().sorted().toArray())
                .as("the recovered pages are handed out again").containsExactly(0, 1);
        CacheStats stats = await(s.cache().stats());
        assertThat(stats.ranks()).allSatisfy(r -> assertThat(r.mappedPages()).as(r.rank()).isEqualTo(2));
        await(s.cache().free(ok));
        SimPool.invariantsHold(s.cache());
        await(s.cache().close());
    }

    @Test
    void aRankWithoutAWorkerFailsAtOnceAndRejoinsWhenItIsBack(Vertx vertx) {
        String name = "fault-gone";
        Setup s = setup(vertx, name, 5_000);
        await(vertx.undeploy(s.workers().get(3)));

        Allocation miss = await(s.cache().alloc(1));
        assertThat(miss.missReason()).isEqualTo(MissReason.RANK_DOWN);
        assertThat(miss.detail()).contains("pp0/tp3 NO_RANK", "no worker for pp0/tp3 at kvpager.fault-gone.pp0.tp3",
                "unmap again on pp0/tp0, pp0/tp1, pp0/tp2");
        assertThat(accounting(name, 4).subList(0, 3)).isEqualTo(s.before().subList(0, 3));
        CacheStats stats = await(s.cache().stats());
        assertThat(stats.healthy()).isFalse();
        assertThat(stats.rank("pp0/tp3").failure().code()).isEqualTo(FailureCode.NO_RANK);
        assertThat(stats.state()).isEqualTo(CacheState.DEGRADED);
        assertThat(stats.reason()).startsWith("a rank is down: pp0/tp3 NO_RANK: no worker for pp0/tp3");
        assertThat(stats.toJson().getString("reason")).isEqualTo(stats.reason());

        await(deployWorker(vertx, name, 0, 3, 4));
        theNextAllocationWorks(s);
    }

    @Test
    void aLostRankWhoseWorkerComesBackRejoinsWithoutWaitingForAnAllocation(Vertx vertx) {
        String name = "fault-back";
        Setup s = setup(vertx, name, 5_000);
        Allocation held = await(s.cache().alloc(2 * SimPool.BLOCKS_PER_PAGE));
        assertThat(held.isMiss()).as(held.toString()).isFalse();
        await(vertx.undeploy(s.workers().get(3)));
        assertThat(await(s.cache().alloc(1)).missReason()).isEqualTo(MissReason.RANK_DOWN);
        assertThat(await(s.cache().stats()).state()).isEqualTo(CacheState.DEGRADED);

        await(deployWorker(vertx, name, 0, 3, 4));
        // no allocation comes: the coordinator brings the rank back by itself, with the pages the others hold
        await().atMost(Duration.ofSeconds(10)).until(() -> {
            CacheStats stats = await(s.cache().stats());
            return stats.state() == CacheState.READY && stats.rank("pp0/tp3").mappedPages() == 2;
        });
        CacheStats stats = await(s.cache().stats());
        assertThat(stats.pool().mappedPages()).isEqualTo(2);
        assertThat(stats.ranks()).allSatisfy(r -> assertThat(r.mappedPages()).as(r.rank()).isEqualTo(2));
        SimPool.invariantsHold(s.cache());
        await(s.cache().free(held));
        await(s.cache().close());
    }

    @Test
    void aRefillThatKeepsFailingMakesTheCacheDegradedUntilItSucceeds(Vertx vertx) {
        String name = "fault-refill";
        await(deployWorkers(vertx, name, 4));
        KvCache cache = await(KvCache.deploy(vertx, options(name).setLocalWorkers(false).setReserveLow(2).setReserveHigh(2)));
        await().atMost(Duration.ofSeconds(10)).until(() -> await(cache.stats()).pool().reservePages() == 2);
        CacheStats ready = await(cache.stats());
        assertThat(ready.state()).isEqualTo(CacheState.READY);
        assertThat(ready.reason()).isNull();

        FaultPlan faults = device(name, 2, "pp0/tp2").faults();
        faults.add(Fault.error(DriverCall.MAP, "CUDA_ERROR_ILLEGAL_ADDRESS"));
        // taking the reserve leaves the refill to map more, which pp0/tp2 fails round after round
        Allocation taken = await(cache.alloc(2 * SimPool.BLOCKS_PER_PAGE));
        assertThat(taken.isMiss()).as(taken.toString()).isFalse();
        await().atMost(Duration.ofSeconds(10)).until(() -> CacheState.DEGRADED.equals(await(cache.stats()).state()));
        CacheStats degraded = await(cache.stats());
        assertThat(degraded.healthy()).as("every rank answers").isTrue();
        assertThat(degraded.reason()).contains("the background refill failed", "rounds in a row", "pp0/tp2 DRIVER_ERROR",
                "CUDA_ERROR_ILLEGAL_ADDRESS");

        faults.clear();
        await().atMost(Duration.ofSeconds(10)).until(() -> CacheState.READY.equals(await(cache.stats()).state()));
        assertThat(await(cache.stats()).reason()).isNull();
        await(cache.free(taken));
        SimPool.invariantsHold(cache);
        await(cache.close());
    }
}
