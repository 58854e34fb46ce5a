package io.kvpager.cache;

import io.kvpager.Allocation;
import io.kvpager.MissReason;
import io.kvpager.sim.DriverCall;
import io.kvpager.sim.Fault;
import io.kvpager.sim.FaultPlan;
import io.kvpager.sim.SimGpu;
import io.kvpager.sim.SimOptions;
import io.vertx.core.Vertx;
import io.vertx.core.json.JsonObject;
import io.vertx.junit5.VertxExtension;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import java.time.Duration;

import static io.kvpager.cache.SimPool.PAGE_ID_BYTES;
import static io.kvpager.cache.SimPool.await;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * The unmapped handles a cache's ranks keep while its pages churn ({@code idleHandlePages}): kept
 * after an unmap, taken by the next map instead of a create, always counted in the GPU's budget
 * as the pool's, and given back when the unmaps stop or another pool needs the memory. One rank on
 * one simulated GPU, the reserve off, so every alloc maps and every free unmaps.
 */
@ExtendWith(VertxExtension.class)
class IdleHandlesTest {

    private static final Duration BOUND = Duration.ofSeconds(10);

    private static KvCacheOptions options(String instance, String gpuKey, int gpuPages) {
        return SimPool.options(instance).setTp(1).setSim(SimOptions.defaults().withGpuKey(gpuKey).withCapacityBytes(gpuPages * PAGE_ID_BYTES));
    }

    private static Allocation page(KvCache cache) {
        Allocation a = await(cache.alloc(SimPool.BLOCKS_PER_PAGE));
        assertThat(a.isMiss()).as(a.detail()).isFalse();
        return a;
    }

    /** The handles rank pp0/tp0's pool has created so far. */
    private static long creates(Vertx vertx, String instance) {
        JsonObject stats = await(SimPool.toRank(vertx, instance, 0, 0, "stats", new JsonObject()));
        return stats.getJsonArray("handlePools").getJsonObject(0).getLong("creates");
    }

    private static long held(KvCache cache) {
        return await(cache.stats()).gpus().getFirst().heldBytes();
    }

    @Test
    void aChurningPoolKeepsTheUnmappedHandlesCountedAndTheNextMapTakesThem(Vertx vertx) {
        KvCache cache = await(KvCache.deploy(vertx, options("idle-churn", "idle-churn", 16).setIdleHandleMs(60_000)));
        SimGpu gpu = SimPool.gpu("idle-churn", 0);
        Allocation first = page(cache);
        await(cache.free(first));
        // the count is raised after the unmap: the handle that unmap released is not kept, the next one is
        await().atMost(BOUND).until(() -> held(cache) == PAGE_ID_BYTES);
        assertThat(gpu.bytesInUse()).isZero();

        Allocation second = page(cache);
        assertThat(held(cache)).as("the page and the kept handle's count").isEqualTo(2 * PAGE_ID_BYTES);
        await(cache.free(second));
        assertThat(gpu.bytesInUse()).as("the unmapped handle is kept idle").isEqualTo(PAGE_ID_BYTES);
        assertThat(held(cache)).isEqualTo(PAGE_ID_BYTES);
        long creates = creates(vertx, "idle-churn");

        for (int i = 0; i < 5; i++) {
            Allocation again = page(cache);
            assertThat(gpu.bytesInUse()).as("one handle, mapped").isEqualTo(PAGE_ID_BYTES);
            assertThat(held(cache)).isGreaterThanOrEqualTo(gpu.bytesInUse());
            await(cache.free(again));
        }
        assertThat(creates(vertx, "idle-churn")).as("the maps took the kept handle").isEqualTo(creates);
        await(cache.close());
        assertThat(gpu.bytesInUse()).isZero();
    }

    @Test
    void theHandlesAndTheirBudgetGoBackWhenTheUnmapsStop(Vertx vertx) {
        KvCache cache = await(KvCache.deploy(vertx, options("idle-stop", "idle-stop", 16).setIdleHandleMs(50)));
        SimGpu gpu = SimPool.gpu("idle-stop", 0);
        await(cache.free(page(cache)));
        Allocation a = page(cache);
        await(cache.free(a));
        await().atMost(BOUND).until(() -> held(cache) == 0 && gpu.bytesInUse() == 0);
        await(cache.close());
    }

    @Test
    void noneAreKeptWhenTheOptionIsZero(Vertx vertx) {
        KvCache cache = await(KvCache.deploy(vertx, options("idle-none", "idle-none", 16).setIdleHandlePages(0)));
        SimGpu gpu = SimPool.gpu("idle-none", 0);
        for (int i = 0; i < 3; i++) {
            await(cache.free(page(cache)));
            assertThat(gpu.bytesInUse()).isZero();
            assertThat(held(cache)).isZero();
        }
        await(cache.close());
    }

    @Test
    void anotherPoolsRecallTakesTheKeptHandlesBeforeItMisses(Vertx vertx) {
        KvCache churning = await(KvCache.deploy(vertx, options("idle-recall-a", "idle-recall", 16).setIdleHandleMs(60_000)));
        KvCache other = await(KvCache.deploy(vertx, options("idle-recall-b", "idle-recall", 16)));
        SimGpu gpu = SimPool.gpu("idle-recall", 0);
        Allocation four = await(churning.alloc(4 * SimPool.BLOCKS_PER_PAGE));
        await(churning.free(four));
        Allocation again = await(churning.alloc(4 * SimPool.BLOCKS_PER_PAGE));
        await(churning.free(again));
        assertThat(gpu.bytesInUse()).as("four page ids of handles kept").isEqualTo(4 * PAGE_ID_BYTES);

        Allocation most = await(other.alloc(14 * SimPool.BLOCKS_PER_PAGE));
        assertThat(most.isMiss()).as(most.detail()).isFalse();
        assertThat(held(churning)).isZero();
        assertThat(gpu.bytesInUse()).isEqualTo(14 * PAGE_ID_BYTES);
        assertThat(await(other.stats()).pool().misses()).doesNotContainKeys(MissReason.LIMIT, MissReason.GPU_SHARE);
        await(other.close());
        await(churning.close());
        assertThat(gpu.bytesInUse()).isZero();
    }

    @Test
    void aReleaseThatFailsWhileLoweringKeepsTheCountUntilARankConfirms(Vertx vertx) {
        KvCache cache = await(KvCache.deploy(vertx, options("idle-release-fails", "idle-release-fails", 16).setIdleHandleMs(50)));
        SimGpu gpu = SimPool.gpu("idle-release-fails", 0);
        await(cache.free(page(cache)));
        Allocation kept = page(cache);
        FaultPlan faults = SimPool.device("idle-release-fails", 0, "pp0/tp0").faults();
        faults.add(Fault.error(DriverCall.RELEASE, "CUDA_ERROR_UNKNOWN"));
        await(cache.free(kept));
        // two periods asked to lower the count, and the rank could not release the kept handle either time
        await().atMost(BOUND).until(() -> faults.firedTotal() >= 2);
        assertThat(gpu.bytesInUse()).isEqualTo(PAGE_ID_BYTES);
        assertThat(held(cache)).as("the budget counts what the device still holds").isEqualTo(PAGE_ID_BYTES);
        // once releases work again, the next period releases it and the budget goes back
        faults.clear();
        await().atMost(BOUND).until(() -> held(cache) == 0 && gpu.bytesInUse() == 0);
        await(cache.close());
    }

    @Test
    void aMapThatFailsOnKeptHandlesLeavesThemKeptAndCounted(Vertx vertx) {
        KvCache cache = await(KvCache.deploy(vertx, options("idle-map-fails", "idle-map-fails", 16).setIdleHandleMs(60_000)));
        SimGpu gpu = SimPool.gpu("idle-map-fails", 0);
        await(cache.free(page(cache)));
        await(cache.free(page(cache)));
        assertThat(gpu.bytesInUse()).isEqualTo(PAGE_ID_BYTES);
        SimPool.device("idle-map-fails", 0, "pp0/tp0").faults().add(Fault.error(DriverCall.ACCESS, "CUDA_ERROR_UNKNOWN").nth(1));
        Allocation failed = await(cache.alloc(SimPool.BLOCKS_PER_PAGE));
        assertThat(failed.missReason()).isEqualTo(MissReason.MAP_FAILED);
        assertThat(gpu.bytesInUse()).as("the handle went back idle").isEqualTo(PAGE_ID_BYTES);
        assertThat(held(cache)).isEqualTo(PAGE_ID_BYTES);
        SimPool.invariantsHold(cache);
        Allocation again = page(cache);
        assertThat(gpu.bytesInUse()).isEqualTo(PAGE_ID_BYTES);
        await(cache.free(again));
        await(cache.close());
        assertThat(gpu.bytesInUse()).isZero();
    }
}
