package io.kvpager.cache;

import io.kvpager.Allocation;
import io.kvpager.MissReason;
import io.kvpager.impl.broker.GpuBroker;
import io.kvpager.sim.SimGpu;
import io.kvpager.sim.SimOptions;
import io.vertx.core.Vertx;
import io.vertx.junit5.VertxExtension;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import static io.kvpager.cache.SimPool.await;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * Two caches in one process whose ranks share one simulated GPU of 16 page ids: the GPU's broker
 * (the process's own shared data here) refuses a burst the other cache's memory leaves no room
 * for, as a {@link MissReason#GPU_SHARE} miss before the device is asked, and grants it once that
 * memory is released. The device never runs out of memory. Both caches are guaranteed 0 % of the
 * GPU: first-come sharing, where nobody is asked to give back (GuaranteedShareTest has the rest).
 */
@ExtendWith(VertxExtension.class)
class SharedGpuTest {

    private static final int GPU_PAGES = 16;
    private static final int BURST = 12;

    private static KvCacheOptions options(String instance) {
        SimOptions sim = SimOptions.defaults().withGpuKey("shared-gpu-test").withCapacityBytes(GPU_PAGES * SimPool.PAGE_ID_BYTES);
        return SimPool.options(instance).setTp(1).setPages(GPU_PAGES).setSim(sim).setGuaranteePercent(0);
    }

    @Test
    void twoCachesOnOneGpuBurstInTurnEachGettingWhatTheOtherReleased(Vertx vertx) {
        KvCache a = await(KvCache.deploy(vertx, options("shared-a")));
        KvCache b = await(KvCache.deploy(vertx, options("shared-b")));
        SimGpu gpu = SimPool.gpu("shared-gpu-test", 0);
        assertThat(gpu.devices()).hasSize(2);
        GpuStats seen = await(a.stats()).gpus().getFirst();
        assertThat(seen.gpu()).startsWith("sim:shared-gpu-test:0@");
        assertThat(seen.capacityBytes()).isEqualTo(GPU_PAGES * SimPool.PAGE_ID_BYTES);

        for (int round = 0; round < 2; round++) {
            burstWhileTheOtherWaits(a, b, gpu);
            burstWhileTheOtherWaits(b, a, gpu);
        }
        for (KvCache cache : List.of(a, b)) {
            assertThat(await(cache.stats()).pool().misses()).containsOnlyKeys(MissReason.GPU_SHARE).containsEntry(MissReason.GPU_SHARE, 2L);
        }
        await(a.close());
        await(b.close());
        assertThat(gpu.bytesInUse()).isZero();
    }

    @Test
    void aGpuWithoutRoomRefusesTheMapAndTheOtherGpusGiveTheirShareBack(Vertx vertx) {
        SimOptions sim = SimOptions.defaults().withGpuKey("two-gpus-test").withCapacityBytes(GPU_PAGES * SimPool.PAGE_ID_BYTES);
        // ranks on GPUs 0 and 1; another cache holds most of GPU 1
        KvCache wide = await(KvCache.deploy(vertx, SimPool.options("wide").setTp(2).setPages(GPU_PAGES).setSim(sim)));
        KvCache other = await(KvCache.deploy(vertx, SimPool.options("narrow").setTp(1).setPages(GPU_PAGES).setSim(sim)
                .setGpus(Map.of("pp0/tp0", 1))));
        Allocation most = await(other.alloc(BURST * SimPool.BLOCKS_PER_PAGE));
        assertThat(most.isMiss()).as(most.detail()).isFalse();

        Allocation refused = await(wide.alloc(8 * SimPool.BLOCKS_PER_PAGE));
        assertThat(refused.missReason()).isEqualTo(MissReason.GPU_SHARE);
        assertThat(refused.detail()).contains("gpu sim:two-gpus-test:1@", "has no room for 8 pages");
        List<GpuStats> gpus = await(wide.stats()).gpus();
        assertThat(gpus).extracting(GpuStats::heldBytes).containsExactly(0L, 0L);
        assertThat(gpus).extracting(GpuStats::takenBytes).containsExactly(0L, BURST * SimPool.PAGE_ID_BYTES);
        assertThat(SimPool.gpu("two-gpus-test", 0).bytesInUse()).isZero();

        Allocation fits = await(wide.alloc(4 * SimPool.BLOCKS_PER_PAGE));
        assertThat(fits.isMiss()).as(fits.detail()).isFalse();
        assertThat(await(wide.stats()).gpus()).extracting(GpuStats::heldBytes)
                .containsExactly(4 * SimPool.PAGE_ID_BYTES, 4 * SimPool.PAGE_ID_BYTES);
        await(wide.close());
        await(other.close());
        for (GpuStats gpu : gpus) {
            assertThat(await(GpuBroker.open(vertx, gpu.gpu(), 1).compose(GpuBroker::taken))).as(gpu.gpu()).isZero();
        }
    }

    @Test
    void theCachesTakeNoMoreThanTheShareOfTheGpuTheirWorkersLeaveThem(Vertx vertx) {
        SimOptions sim = SimOptions.defaults().withGpuKey("half-gpu-test").withCapacityBytes(GPU_PAGES * SimPool.PAGE_ID_BYTES);
        KvCache half = await(KvCache.deploy(vertx, SimPool.options("half").setTp(1).setPages(GPU_PAGES).setSim(sim)
                .setIdleHandlePages(0).setGpuMemoryPercent(50)));
        GpuStats gpu = await(half.stats()).gpus().getFirst();
        assertThat(gpu.capacityBytes()).isEqualTo(GPU_PAGES / 2 * SimPool.PAGE_ID_BYTES);

        Allocation refused = await(half.alloc(BURST * SimPool.BLOCKS_PER_PAGE));
        assertThat(refused.missReason()).as(refused.detail()).isEqualTo(MissReason.GPU_SHARE);
        assertThat(refused.detail()).contains("has no room for " + BURST + " pages");
        assertThat(SimPool.gpu("half-gpu-test", 0).bytesInUse()).isZero();
        Allocation fits = await(half.alloc(GPU_PAGES / 2 * SimPool.BLOCKS_PER_PAGE));
        assertThat(fits.isMiss()).as(fits.detail()).isFalse();
        assertThat(SimPool.gpu("half-gpu-test", 0).bytesInUse()).isEqualTo(GPU_PAGES / 2 * SimPool.PAGE_ID_BYTES);
        Allocation more = await(half.alloc(SimPool.BLOCKS_PER_PAGE));
        assertThat(more.missReason()).as(more.detail()).isEqualTo(MissReason.GPU_SHARE);
        assertThat(SimPool.gpu("half-gpu-test", 0).bytesInUse()).isEqualTo(GPU_PAGES / 2 * SimPool.PAGE_ID_BYTES);
        SimPool.invariantsHold(half);
        await(half.close());
        assertThat(SimPool.gpu("half-gpu-test", 0).bytesInUse()).isZero();
    }

    private static void burstWhileTheOtherWaits(KvCache first, KvCache second, SimGpu gpu) {
        List<Allocation> held = new ArrayList<>();
        for (int i = 0; i < BURST; i++) {
            Allocation a = await(first.alloc(SimPool.BLOCKS_PER_PAGE));
            assertThat(a.isMiss()).as(a.detail()).isFalse();
            held.add(a);
        }
        assertThat(gpu.bytesInUse()).isEqualTo(BURST * SimPool.PAGE_ID_BYTES);
        GpuStats lease = await(first.stats()).gpus().getFirst();
        assertThat(lease.heldBytes()).isEqualTo(BURST * SimPool.PAGE_ID_BYTES);
        // the taken bytes count the first cache's lease: what it holds, and at most an eighth of the GPU above that
        assertThat(await(second.stats()).gpus().getFirst().takenBytes()).isEqualTo(lease.leasedBytes())
                .isBetween(lease.heldBytes(), lease.heldBytes() + GPU_PAGES * SimPool.PAGE_ID_BYTES / 8);

        Allocation refused = await(second.alloc(8 * SimPool.BLOCKS_PER_PAGE));
        assertThat(refused.missReason()).isEqualTo(MissReason.GPU_SHARE);
        assertThat(refused.detail()).contains("has no room for 8 pages");
        assertThat(gpu.bytesInUse()).as("the device was not asked").isEqualTo(BURST * SimPool.PAGE_ID_BYTES);

        for (Allocation a : held) {
            await(first.free(a));
        }
        await().atMost(Duration.ofSeconds(10)).until(() -> await(second.stats()).gpus().getFirst().takenBytes() == 0);
        assertThat(gpu.bytesInUse()).isZero();
    }
}
