package io.kvpager.cache;

import io.kvpager.Allocation;
import io.kvpager.MissReason;
import io.kvpager.impl.broker.GpuBroker;
import io.kvpager.impl.broker.GpuShares;
import io.kvpager.sim.SimGpu;
import io.kvpager.sim.SimOptions;
import io.reactivex.rxjava3.core.BackpressureStrategy;
import io.reactivex.rxjava3.core.Flowable;
import io.reactivex.rxjava3.subscribers.TestSubscriber;
import io.vertx.core.Vertx;
import io.vertx.core.json.JsonObject;
import io.vertx.junit5.VertxExtension;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

import static io.kvpager.cache.SimPool.await;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * Caches in one process whose ranks share one simulated GPU of 16 page ids, each guaranteed an
 * equal split of it: a cache that borrowed beyond its half is asked to give back when the other,
 * below its half, is refused; its engine frees blocks and the other is served, or its engine does
 * not and it is capped at its guarantee. The device never holds more than the GPU's capacity.
 */
@ExtendWith(VertxExtension.class)
class GuaranteedShareTest {

    private static final int GPU_PAGES = 16;
    private static final long PAGE = SimPool.PAGE_ID_BYTES;
    private static final long DEADLINE_MS = 300;

    private static KvCacheOptions options(String gpuKey, String instance) {
        SimOptions sim = SimOptions.defaults().withGpuKey(gpuKey).withCapacityBytes(GPU_PAGES * PAGE);
        return SimPool.options(instance).setTp(1).setPages(GPU_PAGES).setSim(sim).setIdleHandlePages(0)
                .setReclaimDeadlineMs(DEADLINE_MS);
    }

    /** {@code pages} allocations of one page each, all served. */
    private static Deque<Allocation> fill(KvCache cache, int pages) {
        Deque<Allocation> held = new ArrayDeque<>();
        for (int i = 0; i < pages; i++) {
            Allocation a = await(cache.alloc(SimPool.BLOCKS_PER_PAGE));
            assertThat(a.isMiss()).as(a.detail()).isFalse();
            assertThat(a.reclaimWaitNanos()).isZero();
            held.add(a);
        }
        return held;
    }

    /** An engine that answers a reclaim by freeing whole allocations, newest first, until the blocks asked are free. */
    private static void honour(KvCache cache, Deque<Allocation> held, List<Reclaim> seen) {
        cache.reclaimHandler(reclaim -> {
            seen.add(reclaim);
            int freed = 0;
            while (freed < reclaim.blocks() && !held.isEmpty()) {
                Allocation a = held.pollLast();
                freed += a.size();
                cache.free(a);
            }
        });
    }

    @Test
    void aBorrowerGivesBackWhatAGuaranteedCacheNeedsAndItIsServed(Vertx vertx) {
        KvCache big = await(KvCache.deploy(vertx, options("reclaim-honoured", "big")));
        assertThat(await(big.stats()).gpus().getFirst().guaranteeBytes()).as("alone, all of it").isEqualTo(GPU_PAGES * PAGE);
        SimGpu gpu = SimPool.gpu("reclaim-honoured", 0);
        // big takes 14 of the 16 pages alone, then small comes (with small there, big would have left a
        // quarter of small's unused guarantee free)
        Deque<Allocation> held = fill(big, 14);
        KvCache small = await(KvCache.deploy(vertx, options("reclaim-honoured", "small")));
        assertThat(await(big.stats()).gpus().getFirst().guaranteeBytes()).isEqualTo(GPU_PAGES / 2 * PAGE);
        List<Reclaim> seen = new CopyOnWriteArrayList<>();
        honour(big, held, seen);
        List<JsonObject> published = new CopyOnWriteArrayList<>();
        vertx.eventBus().<JsonObject>consumer(Reclaim.address("big"), m -> published.add(m.body()));

        Allocation served = await(small.alloc(6 * SimPool.BLOCKS_PER_PAGE));

        assertThat(served.isMiss()).as(served.detail()).isFalse();
        assertThat(served.reclaimWaitNanos()).isPositive().isLessThan((DEADLINE_MS + 100) * 1_000_000);
        // 6 pages needed, 2 free: the 4 short and half of the 2 then left up to small's guarantee of 8,
        // 5 of the 6 big holds above its guarantee
        assertThat(seen).singleElement().satisfies(r -> {
            assertThat(r.blocks()).isEqualTo(5 * SimPool.BLOCKS_PER_PAGE);
            assertThat(r.deadlineMs()).isEqualTo(DEADLINE_MS);
            assertThat(r.reason()).contains("cache small group 0 is below its guarantee of " + 8 * PAGE + " bytes");
        });
        await().atMost(Duration.ofSeconds(5)).until(() -> published.size() == 1);
        assertThat(Reclaim.fromJson(published.getFirst())).isEqualTo(seen.getFirst());
        GpuStats bigGpu = await(big.stats()).gpus().getFirst();
        assertThat(bigGpu.reclaimsAsked()).isEqualTo(1);
        assertThat(bigGpu.reclaimBlocksAsked()).isEqualTo(5 * SimPool.BLOCKS_PER_PAGE);
        assertThat(bigGpu.timesCapped()).isZero();
        assertThat(bigGpu.heldBytes()).isEqualTo(9 * PAGE);
        assertThat(gpu.bytesInUse()).isEqualTo(15 * PAGE);
        // the last free page: small, below its guarantee, takes it without a reclaim
        Allocation again = await(small.alloc(SimPool.BLOCKS_PER_PAGE));
        assertThat(again.isMiss()).as(again.detail()).isFalse();
        assertThat(again.reclaimWaitNanos()).isZero();
        assertThat(gpu.bytesInUse()).isEqualTo(16 * PAGE);
        // honoured in time: big is not capped, however long we look
        await().during(Duration.ofMillis(DEADLINE_MS + 200)).atMost(Duration.ofSeconds(3))
                .until(() -> !await(big.stats()).gpus().getFirst().capped());
        SimPool.invariantsHold(big);
        SimPool.invariantsHold(small);
        await(small.close());
        await(big.close());
        assertThat(gpu.bytesInUse()).isZero();
    }

    @Test
    void ofThreeCachesTheLargestExcessIsAskedFirstAndTheNextOnlyForWhatItLeaves(Vertx vertx) {
        KvCache a = await(KvCache.deploy(vertx, options("reclaim-three", "a")));
        KvCache b = await(KvCache.deploy(vertx, options("reclaim-three", "b")));
        SimGpu gpu = SimPool.gpu("reclaim-three", 0);
        // a holds 8 pages and b 7, then c comes: guarantees of a third each, 5 1/3 pages, a is 2 2/3
        // above, b 1 2/3 above, c holds none
        Deque<Allocation> heldByA = fill(a, 8);
        Deque<Allocation> heldByB = fill(b, 7);
        KvCache c = await(KvCache.deploy(vertx, options("reclaim-three", "c")));
        List<Reclaim> askedOfA = new CopyOnWriteArrayList<>();
        List<Reclaim> askedOfB = new CopyOnWriteArrayList<>();
        honour(a, heldByA, askedOfA);
        honour(b, heldByB, askedOfB);

        Allocation served = await(c.alloc(3 * SimPool.BLOCKS_PER_PAGE));

        assertThat(served.isMiss()).as(served.detail()).isFalse();
        assertThat(served.reclaimWaitNanos()).isPositive();
        // 3 pages needed, 1 free: the 2 short and half of the 2 1/3 then left up to c's guarantee,
        // 3 1/6 pages: all 2 2/3 above a's guarantee (a page rounds up to 3), the last half page of b
        assertThat(askedOfA).singleElement().extracting(Reclaim::blocks).isEqualTo(3 * SimPool.BLOCKS_PER_PAGE);
        assertThat(askedOfB).singleElement().extracting(Reclaim::blocks).isEqualTo(SimPool.BLOCKS_PER_PAGE);
        assertThat(await(a.stats()).gpus().getFirst().heldBytes()).isEqualTo(5 * PAGE);
        assertThat(await(b.stats()).gpus().getFirst().heldBytes()).isEqualTo(6 * PAGE);
        assertThat(gpu.bytesInUse()).isEqualTo(14 * PAGE);
        for (KvCache cache : List.of(a, b, c)) {
            SimPool.invariantsHold(cache);
            await(cache.close());
        }
        assertThat(gpu.bytesInUse()).isZero();
    }

    @Test
    void aBorrowerThatIgnoresTheReclaimIsCappedAtItsGuaranteeUntilItIsUnderIt(Vertx vertx) {
        KvCache big = await(KvCache.deploy(vertx, options("reclaim-ignored", "big")));
        KvCache small = await(KvCache.deploy(vertx, options("reclaim-ignored", "small")));
        SimGpu gpu = SimPool.gpu("reclaim-ignored", 0);
        Deque<Allocation> held = fill(big, 14);
        List<Reclaim> seen = new CopyOnWriteArrayList<>();
        big.reclaimHandler(seen::add);

        Allocation refused = await(small.alloc(6 * SimPool.BLOCKS_PER_PAGE));

        assertThat(refused.missReason()).isEqualTo(MissReason.GPU_SHARE);
        assertThat(refused.gpuShare()).isTrue();
        assertThat(refused.detail()).contains("has no room for 6 pages", "the reclaim from big.group0 did not free enough within");
        assertThat(seen).hasSize(1);
        await().atMost(Duration.ofSeconds(5)).until(() -> await(big.stats()).gpus().getFirst().timesCapped() == 1);
        assertThat(await(big.stats()).gpus().getFirst().capped()).isTrue();
        assertThat(gpu.bytesInUse()).isEqualTo(14 * PAGE);

        // capped: nothing above its guarantee, though 2 pages are free
        Allocation more = await(big.alloc(SimPool.BLOCKS_PER_PAGE));
        assertThat(more.missReason()).as(more.detail()).isEqualTo(MissReason.GPU_SHARE);
        assertThat(more.detail()).contains("capped at its guarantee of " + 8 * PAGE + " bytes");
        // the small cache still has its 2 free pages
        Allocation two = await(small.alloc(2 * SimPool.BLOCKS_PER_PAGE));
        assertThat(two.isMiss()).as(two.detail()).isFalse();

        // under its guarantee again, the cap is lifted
        big.reclaimHandler(null);
        while (held.size() > 7) {
            await(big.free(held.pollLast()));
        }
        await().atMost(Duration.ofSeconds(5)).until(() -> !await(big.stats()).gpus().getFirst().capped());
        Allocation again = await(big.alloc(SimPool.BLOCKS_PER_PAGE));
        assertThat(again.isMiss()).as(again.detail()).isFalse();
        assertThat(gpu.bytesInUse()).isLessThanOrEqualTo(GPU_PAGES * PAGE);
        await(small.close());
        await(big.close());
        assertThat(gpu.bytesInUse()).isZero();
    }

    @Test
    void theRxJavaFaceEmitsTheReclaims(Vertx vertx) {
        KvCache big = await(KvCache.deploy(vertx, options("reclaim-rx", "big")));
        KvCache small = await(KvCache.deploy(vertx, options("reclaim-rx", "small")));
        fill(big, 12);
        io.kvpager.rxjava3.cache.KvCache rx = io.kvpager.rxjava3.cache.KvCache.newInstance(big);
        TestSubscriber<Reclaim> reclaims = Flowable.<Reclaim>create(emitter -> rx.reclaimHandler(emitter::onNext),
                BackpressureStrategy.BUFFER).test();

        Allocation refused = await(small.alloc(8 * SimPool.BLOCKS_PER_PAGE));

        assertThat(refused.isMiss()).as("nobody frees").isTrue();
        reclaims.awaitCount(1);
        reclaims.assertValueCount(1);
        Reclaim r = reclaims.values().getFirst();
        // 8 needed, 4 free: 4 pages' blocks
        assertThat(r.blocks()).isEqualTo(4 * SimPool.BLOCKS_PER_PAGE);
        assertThat(r.reason()).contains("cache small group 0");
        assertThat(rx.reclaimHandler(null)).isSameAs(rx);
        reclaims.cancel();
        await(small.close());
        await(big.close());
    }

    @Test
    void theEqualSplitFollowsTheCachesAsTheyComeAndGo(Vertx vertx) {
        KvCache a = await(KvCache.deploy(vertx, options("split-follows", "a")));
        assertThat(await(a.stats()).gpus().getFirst().guaranteeBytes()).isEqualTo(16 * PAGE);
        KvCache b = await(KvCache.deploy(vertx, options("split-follows", "b")));
        KvCache c = await(KvCache.deploy(vertx, options("split-follows", "c").setGuaranteePercent(50)));
        // c asks half; a and b split the other half
        assertThat(await(a.stats()).gpus().getFirst().guaranteeBytes()).isEqualTo(4 * PAGE);
        assertThat(await(c.stats()).gpus().getFirst().guaranteeBytes()).isEqualTo(8 * PAGE);
        await(c.close());
        assertThat(await(b.stats()).gpus().getFirst().guaranteeBytes()).isEqualTo(8 * PAGE);
        await(b.close());
        assertThat(await(a.stats()).gpus().getFirst().guaranteeBytes()).isEqualTo(16 * PAGE);
        await(a.close());
    }

    @Test
    void guaranteesThatDoNotFitTheGpuAreRefusedAndChangeNothing(Vertx vertx) {
        KvCache a = await(KvCache.deploy(vertx, options("over-guaranteed", "a").setGuaranteeBytes(10 * PAGE)));
        fill(a, 3);
        String gpuName = await(a.stats()).gpus().getFirst().gpu();
        GpuShares before = await(GpuBroker.open(vertx, gpuName, 1).compose(GpuBroker::shares));
        SimGpu gpu = SimPool.gpu("over-guaranteed", 0);
        List<String> accounting = SimPool.accounting("over-guaranteed", 1);

        Throwable refused = SimPool.failure(KvCache.deploy(vertx, options("over-guaranteed", "b").setGuaranteePercent(50)));

        assertThat(refused).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("cache b group 0: gpu " + gpuName + ": a guarantee of 50 % (" + 8 * PAGE + " bytes) does not fit")
                .hasMessageContaining("the other pools on it are guaranteed " + 10 * PAGE + " of its " + 16 * PAGE + " bytes");
        assertThat(await(GpuBroker.open(vertx, gpuName, 1).compose(GpuBroker::shares))).isEqualTo(before);
        assertThat(SimPool.accounting("over-guaranteed", 1)).isEqualTo(accounting);
        assertThat(gpu.bytesInUse()).isEqualTo(3 * PAGE);
        await(a.close());
    }

    @Test
    void percentZeroEverywhereIsFirstComeSharingWithNoReclaim(Vertx vertx) {
        KvCache big = await(KvCache.deploy(vertx, options("first-come", "big").setGuaranteePercent(0)));
        KvCache small = await(KvCache.deploy(vertx, options("first-come", "small").setGuaranteePercent(0)));
        fill(big, 14);
        List<Reclaim> seen = new ArrayList<>();
        big.reclaimHandler(seen::add);
        Allocation refused = await(small.alloc(6 * SimPool.BLOCKS_PER_PAGE));
        assertThat(refused.missReason()).isEqualTo(MissReason.GPU_SHARE);
        assertThat(refused.detail()).contains("above its guarantee of 0");
        assertThat(refused.reclaimWaitNanos()).isZero();
        assertThat(await(big.stats()).gpus().getFirst().reclaimsAsked()).isZero();
        assertThat(seen).isEmpty();
        await(small.close());
        await(big.close());
    }
}
