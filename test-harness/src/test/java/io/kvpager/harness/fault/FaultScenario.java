package io.kvpager.harness.fault;

import io.kvpager.Allocation;
import io.kvpager.FailureCode;
import io.kvpager.cache.KvCache;
import io.kvpager.cache.KvCacheOptions;
import io.kvpager.cache.KvPagerException;
import io.kvpager.cache.RankFailure;
import io.kvpager.harness.Bounded;
import io.kvpager.harness.BusTap;
import io.kvpager.harness.PoolSnapshot;
import io.kvpager.harness.SimRanks;
import io.kvpager.sim.Fault;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Function;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Runs one {@link FaultCase} on a pool of its own: four rank workers on four simulated GPUs of
 * their own and a cache without a reserve on them, so that every page comes from a map the case
 * can aim at.
 *
 * <p>The fault is armed by a {@link BusTap} as the faulty rank's request goes by, from the page
 * ids it carries, so that "the middle page" is the middle of what the rank was asked. Then: the
 * caller's future completes within its bound and names the rank and its code; once the pool is
 * at rest every device holds what the ledger believes; with the fault gone (plan cleared, hangs
 * released, the rank redeployed) the next allocation maps again on every rank, and giving
 * everything back leaves every device with nothing but what quarantined pages still hold; closing
 * leaves every GPU empty.
 */
final class FaultScenario {

    /**
     * The send timeout of cases whose fault ends in a timeout. It also bounds the allocation that
     * shows the fault gone, whose four ranks must all answer within it: 200 ms was not always
     * enough on two cores at a load average of 25 to 30 (the build testing modules side by side on
     * a shared machine), so 500 ms.
     */
    static final long SHORT_TIMEOUT_MS = 500;
    /** The send timeout of the other cases: long enough never to fire on a loaded machine. */
    static final long LONG_TIMEOUT_MS = 10_000;
    /**
     * How long a delayed call would take: far past the send timeout. The case ends the delay once
     * the caller has its answer ({@link SimRanks#clearFaults()}), so the rank's answer always comes
     * after the timeout, however late a loaded machine runs the timer.
     */
    static final long DELAY_MS = 60_000;
    static final int BLOCKS_PER_PAGE = 4;
    static final int PAGES = 16;
    /** Pages an unmap-side case maps and trims first, so that the rank's handle pool is full. */
    static final int POOL_FILLING_PAGES = 4;
    private static final String DRIVER_ERROR = "CUDA_ERROR_ECC_UNCORRECTABLE";
    private static final Duration REST_BOUND = Duration.ofSeconds(10);

    private final Vertx vertx;
    private final BusTap tap;

    FaultScenario(Vertx vertx, BusTap tap) {
        this.vertx = vertx;
        this.tap = tap;
    }

    void run(FaultCase c, String instance) {
        long timeoutMs = c.kind().timesOut() ? SHORT_TIMEOUT_MS : LONG_TIMEOUT_MS;
        Duration callBound = Duration.ofMillis(3 * timeoutMs + 5_000);
        SimRanks ranks = await(SimRanks.deploy(vertx, instance, FaultCase.TP, new JsonObject().put("capacityBytes", 1L << 30)),
                "deploying the workers");
        KvCache cache = null;
        try {
            cache = await(KvCache.deploy(vertx, options(instance, c, timeoutMs)), "deploying the cache");
            agrees(cache, ranks, "at start");
            if (!c.op().mapSide()) {
                prepareUnmapBatch(cache);
            }
            int rank = c.rank();
            int handlesPerPage = cache.options().geometry().handlesPerPageId();
            tap.interceptFirst(ranks.address(rank), c.op().action(), stepFor(c, ranks, handlesPerPage),
                    c.kind() == FaultKind.REPLY_LOST);
            Object outcome;
            if (c.op().mapSide()) {
                outcome = Bounded.await(cache.alloc(BatchPosition.BATCH_PAGES * BLOCKS_PER_PAGE), callBound, "the allocation");
            } else {
                Future<Void> trim = cache.trim();
                outcome = Bounded.await(trim.transform(ar -> Future.succeededFuture(ar.failed() ? ar.cause() : "trimmed")),
                        callBound, "the trim");
            }
            assertThat(tap.seen()).as("the request to pp0/tp%d went by", rank).isTrue();
            assertThat(tap.stepFailure()).as("arming the fault").isNull();
            JsonArray batch = tap.body().getJsonArray("pages");
            assertThat(batch).as("the batch of the request").hasSize(BatchPosition.BATCH_PAGES);
            if (c.kind().inDriver()) {
                assertThat(ranks.faults(rank).firedTotal()).as("the fault fired").isEqualTo(1);
            }
            assertThat(tap.dropped()).as("the rank's answer was dropped").isEqualTo(c.kind() == FaultKind.REPLY_LOST);

            tap.clear();
            ranks.clearFaults();
            if (c.kind() == FaultKind.RANK_UNDEPLOYED) {
                await(ranks.redeploy(rank), "redeploying pp0/tp" + rank);
            }
            PoolSnapshot after = agrees(cache, ranks, "after the fault");

            int failingPage = batch.getInteger(c.position().index());
            if (c.op().mapSide()) {
                expectMiss(c, (Allocation) outcome, failingPage, timeoutMs);
            } else {
                expectTrimOutcome(c, outcome, failingPage, after);
            }
            expectQuarantine(c, after);

            theFaultIsGone(cache, ranks, after);
        } finally {
            tap.clear();
            ranks.clearFaults();
            if (cache != null) {
                await(cache.close(), "closing the cache");
            }
            await(ranks.close(), "undeploying the workers");
            List<String> left = ranks.leftOver();
            ranks.forgetGpus();
            assertThat(left).as("GPUs still holding memory after close").isEmpty();
        }
    }

    /** What the tap does as the faulty rank's request goes by. */
    private static Function<JsonObject, Future<?>> stepFor(FaultCase c, SimRanks ranks, int handlesPerPage) {
        return body -> switch (c.kind()) {
            case RANK_UNDEPLOYED -> ranks.undeploy(c.rank());
            case REPLY_LOST -> Future.succeededFuture();
            default -> {
                ranks.faults(c.rank()).add(fault(c, body.getJsonArray("pages"), handlesPerPage));
                yield Future.succeededFuture();
            }
        };
    }

    /** The fault for the request's pages: aimed at the page at the case's position, firing once. */
    static Fault fault(FaultCase c, JsonArray pages, int handlesPerPage) {
        Fault fault = switch (c.kind()) {
            case DRIVER_ERROR -> Fault.error(c.op().call(), DRIVER_ERROR);
            case OUT_OF_MEMORY -> Fault.error(c.op().call(), "CUDA_ERROR_OUT_OF_MEMORY");
            case DELAY_PAST_TIMEOUT -> Fault.delay(c.op().call(), DELAY_MS);
            case HANG -> Fault.hang(c.op().call());
            default -> throw new IllegalArgumentException(c.kind() + " is no driver fault");
        };
        if (c.op().pageMatchable()) {
            return fault.onPage(pages.getInteger(c.position().index())).nth(1);
        }
        // create and release name no page: count the rank's calls, one per handle, page by page
        return fault.nth(c.op().perPage() ? (long) c.position().index() * handlesPerPage + 1 : 1);
    }

    private static KvCacheOptions options(String instance, FaultCase c, long timeoutMs) {
        return new KvCacheOptions().setInstance(instance).setTp(FaultCase.TP).setLayers(2).setKvBuffers(2)
                .setBlockBytes((2L << 20) / BLOCKS_PER_PAGE).setPages(PAGES).setLayout(c.layout())
                // an unmap-side case's batch waits in the reserve for the trim (a free would unmap it itself)
                .setReserveLow(0).setReserveHigh(c.op().mapSide() ? 0 : BatchPosition.BATCH_PAGES).setAdaptiveReserve(false)
                // no background round during a case: every map and unmap is the one the case makes
                .setRefillIntervalMs(600_000)
                // every driver call of the batch happens: no handle kept from an earlier unmap spares a
                // create or a release (IdleHandlesTest covers the kept handles' own failures)
                .setIdleHandlePages(0)
                .setSendTimeoutMs(timeoutMs).setTensorsDeadlineMs(5_000).setTensorsPollMs(5)
                .setLocalWorkers(false);
    }

    /**
     * Maps {@code POOL_FILLING_PAGES + BATCH_PAGES} pages and unmaps the first ones (the free
     * unmaps what the reserve has no room for, the trim the rest), so that the ranks' handle pools
     * are full (a PER_LAYER rank keeps four page ids' handles idle) and the batch's handles are
     * released as they are unmapped; then frees the batch's blocks into the reserve, so that a trim
     * unmaps exactly those pages.
     */
    private static void prepareUnmapBatch(KvCache cache) {
        Allocation all = await(cache.alloc((POOL_FILLING_PAGES + BatchPosition.BATCH_PAGES) * BLOCKS_PER_PAGE), "preparing");
        assertThat(all.isMiss()).as(all.toString()).isFalse();
        List<Integer> filling = new ArrayList<>();
        List<Integer> batch = new ArrayList<>();
        List<Integer> pages = new ArrayList<>();
        for (int block : all.blocks()) {
            int page = block / BLOCKS_PER_PAGE;
            if (!pages.contains(page)) {
                pages.add(page);
            }
            (pages.indexOf(page) < POOL_FILLING_PAGES ? filling : batch).add(block);
        }
        await(cache.free(filling), "freeing the pool-filling pages");
        await(cache.trim(), "trimming the pool-filling pages");
        await(cache.free(batch), "freeing the batch");
    }

    private static void expectMiss(FaultCase c, Allocation miss, int failingPage, long timeoutMs) {
        String rank = "pp0/tp" + c.rank();
        assertThat(miss.isMiss()).as("the allocation: %s", miss).isTrue();
        assertThat(miss.missReason()).as(miss.detail()).isEqualTo(c.kind().miss());
        assertThat(miss.detail()).as("the miss names the rank and its code")
                .contains("failed on 1 of " + FaultCase.TP + " ranks", rank + " " + c.kind().code());
        switch (c.kind()) {
            case DRIVER_ERROR, OUT_OF_MEMORY -> assertThat(miss.detail()).contains(
                    rank + " group 0" + (c.op().perPage() ? " page " + failingPage : "") + ": " + c.op().call().driverName()
                            + " failed: " + (c.kind() == FaultKind.DRIVER_ERROR ? DRIVER_ERROR : "CUDA_ERROR_OUT_OF_MEMORY"));
            case DELAY_PAST_TIMEOUT, HANG, REPLY_LOST ->
                    assertThat(miss.detail()).contains(rank + " did not answer map within " + timeoutMs + " ms");
            case RANK_UNDEPLOYED -> assertThat(miss.detail()).contains("no worker for " + rank);
        }
    }

    private static void expectTrimOutcome(FaultCase c, Object outcome, int failingPage, PoolSnapshot after) {
        String rank = "pp0/tp" + c.rank();
        if (c.op() == FaultOp.RELEASE && c.kind() == FaultKind.DRIVER_ERROR) {
            // the pages are unmapped as asked: a handle whose release failed is kept and given back
            // again at the end of the request, which the one-shot fault lets succeed
            assertThat(outcome).as("a failed release does not fail the unmap").isEqualTo("trimmed");
            assertThat(after.ranks().get(c.rank()).groupFigure(0, "unreleasedHandles")).as(rank + " handles waiting for a release")
                    .isZero();
            return;
        }
        assertThat(outcome).as("the trim's outcome").isInstanceOf(KvPagerException.class);
        KvPagerException failure = (KvPagerException) outcome;
        assertThat(failure.code()).as(failure.getMessage()).isEqualTo(c.kind().code());
        assertThat(failure.failures()).as(failure.getMessage()).extracting(RankFailure::rank).containsExactly(rank);
        RankFailure own = failure.failureOf(rank);
        assertThat(own.code()).isEqualTo(c.kind().code());
        if (c.kind() == FaultKind.DRIVER_ERROR) {
            assertThat(own.message()).contains(rank + " group 0 page " + failingPage + ": cuMemUnmap failed: " + DRIVER_ERROR);
        } else if (c.kind() == FaultKind.RANK_UNDEPLOYED) {
            assertThat(own.message()).contains("no worker for " + rank);
        } else {
            assertThat(own.message()).contains(rank + " did not answer unmap");
        }
    }

    /**
     * A rank that does not answer in time (hung, delayed, or its answer lost) leaves the batch's
     * state there unknown: the caller is answered once the send timeout has passed, with the batch
     * quarantined, and nothing waits for a compensation. Any other fault is undone cleanly.
     */
    private static void expectQuarantine(FaultCase c, PoolSnapshot after) {
        int quarantined = after.ledger().quarantinedPages();
        if (c.kind().timesOut()) {
            assertThat(quarantined).as("quarantined pages").isEqualTo(BatchPosition.BATCH_PAGES);
        } else {
            assertThat(quarantined).as("quarantined pages").isZero();
        }
    }

    /**
     * With the fault gone, an allocation that must map a new page succeeds on every rank (a lost
     * rank rejoins first); freeing it and trimming unmaps everything the ledger holds.
     */
    private void theFaultIsGone(KvCache cache, SimRanks ranks, PoolSnapshot after) {
        int idle = after.ledger().reservePages() + after.ledger().reclaimedPages();
        Allocation next = await(cache.alloc((idle + 1) * BLOCKS_PER_PAGE), "the next allocation");
        assertThat(next.isMiss()).as("the next allocation: %s", next).isFalse();
        PoolSnapshot mapped = agrees(cache, ranks, "after the next allocation");
        assertThat(mapped.lostRanks()).as("lost ranks").isEmpty();
        assertThat(mapped.ranks()).allSatisfy(r -> assertThat(r.up()).as(r.rank()).isTrue());
        await(cache.free(next), "freeing the next allocation");
        await(cache.trim(), "trimming after the fault");
        PoolSnapshot trimmed = agrees(cache, ranks, "after the last trim");
        assertThat(trimmed.ledger().mappedPages()).as("mapped pages after the last trim").isZero();
        assertThat(trimmed.ranks()).allSatisfy(r -> assertThat(r.groupFigure(0, "unreleasedHandles"))
                .as(r.rank() + " handles waiting for a release").isZero());
    }

    private PoolSnapshot agrees(KvCache cache, SimRanks ranks, String when) {
        PoolSnapshot snapshot = await(PoolSnapshot.atRest(vertx, cache, ranks, REST_BOUND), "a snapshot " + when);
        assertThat(snapshot.disagreements()).as("devices against the ledger %s (%s)", when, snapshot.summary()).isEmpty();
        return snapshot;
    }

    private static <T> T await(Future<T> future, String what) {
        return Bounded.await(future, REST_BOUND.plusSeconds(5), what);
    }
}
