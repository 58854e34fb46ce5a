package io.kvpager.harness.soak;

import io.kvpager.Allocation;
import io.kvpager.MissReason;
import io.kvpager.cache.CacheStats;
import io.kvpager.cache.KvCache;
import io.kvpager.cache.KvCacheOptions;
import io.kvpager.cache.KvPagerException;
import io.kvpager.harness.Bounded;
import io.kvpager.internal.CoordinatorView;
import io.kvpager.harness.PoolSnapshot;
import io.kvpager.harness.SimRanks;
import io.kvpager.sim.DriverCall;
import io.kvpager.sim.Fault;
import io.kvpager.sim.FaultPlan;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.Vertx;
import io.vertx.core.json.JsonObject;

import java.lang.management.ManagementFactory;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;

/**
 * A TP=4 cache on simulated GPUs driven through its public API for a given number of
 * allocations and frees, with a few operations in flight at once, batch fences opened and retired
 * as an engine's steps do, an occasional trim, and random driver faults on random ranks.
 *
 * <p>Checked as it runs: every operation completes within its bound; an allocation either hands
 * out blocks or misses, a free always succeeds, a trim or a fence's retirement fails only with a
 * rank failure. Every {@code checkEvery} operations, once the operations in flight have completed
 * and the faults are disarmed: the pool comes to rest and every device holds what the ledger
 * believes ({@link PoolSnapshot}), the ledger keeps its invariants, the coordinator's stats count
 * exactly the blocks the driver holds and see every rank healthy. At the end everything is given
 * back and the devices hold nothing but what quarantined pages keep; closed, every GPU is empty;
 * and the heap in use after GC has grown by no more than the bound since the first check after
 * warming up.
 *
 * <p>Any broken rule ends the soak with a {@link SoakFailure} naming the operation and the seed.
 */
public final class Soak {

    public static final int TP = 4;
    static final int BLOCKS_PER_PAGE = 4;
    static final int PAGES = 512;
    /** The driver keeps about this many blocks allocated, a third of the pool. */
    static final int TARGET_BLOCKS = PAGES * BLOCKS_PER_PAGE / 3;
    static final int MAX_ALLOC_BLOCKS = 3 * BLOCKS_PER_PAGE;
    static final int FENCE_EVERY = 128;
    static final int TRIM_EVERY = 256;
    private static final DriverCall[] CALLS = {DriverCall.CREATE, DriverCall.MAP, DriverCall.ACCESS, DriverCall.UNMAP,
            DriverCall.RELEASE, DriverCall.SYNCHRONIZE};
    private static final Duration REST_BOUND = Duration.ofSeconds(20);

    /** One operation in flight. */
    private record Pending(String what, Future<?> future, long deadline, boolean mayFailOnRanks, boolean trim) {
    }

    private final Vertx vertx;
    private final String instance;
    private final SoakOptions options;
    private final SplittableRandom random;
    private final Deque<Pending> window = new ArrayDeque<>();
    private final List<Allocation> live = new ArrayList<>();
    private final Map<MissReason, Long> misses = new EnumMap<>(MissReason.class);
    private SimRanks ranks;
    private KvCache cache;
    private CoordinatorView view;
    private long liveBlocks;
    private long op;
    private long allocs;
    private long frees;
    private long fences;
    private long trims;
    private long failedTrims;
    private long faultsArmed;
    private long faultsFired;
    private long checks;
    private long fence;
    private long heapStart = -1;

    private Soak(Vertx vertx, String instance, SoakOptions options) {
        this.vertx = vertx;
        this.instance = instance;
        this.options = options;
        this.random = new SplittableRandom(options.seed());
    }

    /**
     * Runs a soak on {@code vertx}, on workers and GPUs of its own named {@code instance}.
     *
     * @throws SoakFailure naming the first broken rule
     */
    public static SoakReport run(Vertx vertx, String instance, SoakOptions options) {
        return new Soak(vertx, instance, options).run();
    }

    /** The cache's options: the geometry of a small model's shard, a reserve that adapts. */
    static KvCacheOptions cacheOptions(String instance, SoakOptions options) {
        return new KvCacheOptions().setInstance(instance).setTp(TP).setLayers(2).setKvBuffers(2)
                .setBlockBytes((2L << 20) / BLOCKS_PER_PAGE).setPages(PAGES).setLayout(options.layout())
                .setReserveLow(1).setReserveHigh(8).setAdaptiveReserve(true).setRefillIntervalMs(5)
                .setSendTimeoutMs(options.callBound().toMillis()).setTensorsDeadlineMs(10_000).setLocalWorkers(false);
    }

    private SoakReport run() {
        long started = System.nanoTime();
        ranks = await(SimRanks.deploy(vertx, instance, TP, new JsonObject().put("capacityBytes", 64L << 30)), "deploying the workers");
        try {
            cache = await(KvCache.deploy(vertx, cacheOptions(instance, options)), "deploying the cache");
            view = CoordinatorView.of(cache);
            long warmUp = Math.max(options.checkEvery(), options.ops() / 5);
            while (op < options.ops()) {
                step();
                if (op % options.checkEvery() == 0 || op == options.ops()) {
                    check();
                    if (heapStart < 0 && op >= warmUp) {
                        heapStart = heapAfterGc();
                    }
                }
            }
            long heapEnd = heapAfterGc();
            if (heapStart < 0) {
                heapStart = heapEnd;
            }
            if (heapEnd - heapStart > options.heapBoundBytes()) {
                throw failure("the heap in use after GC grew from " + heapStart + " to " + heapEnd + " bytes, more than "
                        + options.heapBoundBytes());
            }
            PoolSnapshot end = giveEverythingBack();
            SoakReport report = new SoakReport(options.seed(), op, allocs, misses, frees, fences, trims, failedTrims,
                    faultsArmed, faultsFired, checks, end.ledger().maps(), end.ledger().unmaps(),
                    end.ledger().quarantinedPages(), heapStart, heapEnd, (System.nanoTime() - started) / 1e9);
            await(cache.close(), "closing the cache");
            cache = null;
            return report;
        } finally {
            ranks.clearFaults();
            if (cache != null) {
                Bounded.await(cache.close().recover(e -> Future.succeededFuture()), REST_BOUND, "closing the cache");
            }
            await(ranks.close(), "undeploying the workers");
            List<String> left = ranks.leftOver();
            ranks.forgetGpus();
            if (!left.isEmpty()) {
                throw failure("GPUs still hold memory after close: " + left);
            }
        }
    }

    /** One allocation or free, with a random fault, a fence or a trim now and then. */
    private void step() {
        if (random.nextDouble() < options.faultRate()) {
            armFault();
        }
        if (op % FENCE_EVERY == 0) {
            rotateFence();
        }
        if (op % TRIM_EVERY == TRIM_EVERY - 1) {
            trims++;
            submit("trim", cache.trim(), true, true);
        }
        boolean alloc = live.isEmpty() || liveBlocks < TARGET_BLOCKS / 2
                || (liveBlocks < TARGET_BLOCKS && random.nextInt(100) < 55);
        op++;
        if (alloc) {
            int blocks = 1 + random.nextInt(MAX_ALLOC_BLOCKS);
            submit("alloc(" + blocks + ")", cache.alloc(blocks), false);
        } else {
            int index = random.nextInt(live.size());
            Allocation blocks = live.get(index);
            live.set(index, live.getLast());
            live.removeLast();
            liveBlocks -= blocks.size();
            frees++;
            submit("free of " + blocks.size() + " blocks", cache.free(blocks), false);
        }
        while (window.size() >= options.inFlight()) {
            complete(window.poll());
        }
    }

    /** Retires the fence opened last and opens the next one, as an engine does every step. */
    private void rotateFence() {
        if (fence > 0) {
            submit("retired(" + fence + ")", cache.retired(fence), true);
        }
        fence = Bounded.await(cache.fence(), options.callBound(), "operation " + op + " (fence)");
        fences++;
    }

    /**
     * A fault on a random rank's next call of a random kind: a driver error, out of memory, or a
     * short delay, armed independently of the others, so that two can meet in one batch (a rank
     * that fails, and another that fails while undoing its part): that batch is quarantined, and
     * the coordinator's quarantine sweep brings it back once the faults are gone.
     */
    private void armFault() {
        int rank = random.nextInt(TP);
        DriverCall call = CALLS[random.nextInt(CALLS.length)];
        int roll = random.nextInt(10);
        boolean takesMemory = call == DriverCall.CREATE || call == DriverCall.MAP || call == DriverCall.ACCESS;
        Fault fault = roll == 0 ? Fault.delay(call, 1 + random.nextInt(5))
                : roll < 3 && takesMemory ? Fault.error(call, "CUDA_ERROR_OUT_OF_MEMORY")
                : Fault.error(call, "CUDA_ERROR_ECC_UNCORRECTABLE");
        ranks.faults(rank).add(fault.nth(1));
        faultsArmed++;
    }

    private void submit(String what, Future<?> future, boolean mayFailOnRanks) {
        submit(what, future, mayFailOnRanks, false);
    }

    private void submit(String what, Future<?> future, boolean mayFailOnRanks, boolean trim) {
        window.add(new Pending("operation " + op + " (" + what + ")", future,
                System.nanoTime() + options.callBound().toNanos(), mayFailOnRanks, trim));
    }

    private void complete(Pending p) {
        Object result;
        try {
            result = Bounded.await(p.future(), Duration.ofNanos(Math.max(0, p.deadline() - System.nanoTime())), p.what());
        } catch (Bounded.StuckFuture e) {
            throw failure("a stuck future: " + e.getMessage());
        } catch (KvPagerException e) {
            if (!p.mayFailOnRanks()) {
                throw failure(p.what() + " failed: " + e.getMessage());
            }
            if (p.trim()) {
                failedTrims++;
            }
            return;
        } catch (RuntimeException e) {
            throw failure(p.what() + " failed: " + e);
        }
        if (result instanceof Allocation a) {
            if (a.isMiss()) {
                misses.merge(a.missReason(), 1L, Long::sum);
            } else {
                allocs++;
                live.add(a);
                liveBlocks += a.size();
            }
        }
    }

    /** Completes once no map or unmap is in flight in the ledger, trying every millisecond. */
    private Future<Void> ledgerAtRest(long deadline) {
        return view.call(c -> c.ledger().stats()).compose(stats -> {
            if (stats.mappingPages() == 0 && stats.unmappingPages() == 0) {
                return Future.succeededFuture();
            }
            if (System.nanoTime() - deadline > 0) {
                return Future.failedFuture(new IllegalStateException("still mapping or unmapping: " + stats));
            }
            Promise<Void> later = Promise.promise();
            vertx.setTimer(1, t -> ledgerAtRest(deadline).onComplete(later));
            return later.future();
        });
    }

    private void drain() {
        while (!window.isEmpty()) {
            complete(window.poll());
        }
    }

    /** Waits for everything in flight, disarms the faults and checks the ledger against the devices. */
    private PoolSnapshot check() {
        drain();
        for (int r = 0; r < TP; r++) {
            FaultPlan plan = ranks.faults(r);
            faultsFired += plan.firedTotal();
        }
        ranks.clearFaults();
        PoolSnapshot snapshot = await(PoolSnapshot.atRest(vertx, cache, ranks, REST_BOUND), "a snapshot at rest");
        List<String> wrong = snapshot.disagreements();
        if (!wrong.isEmpty()) {
            throw failure("the devices disagree with the ledger: " + wrong + " (" + snapshot.summary() + ")");
        }
        // the public stats are no snapshot (the refill may move between the ledger's figures and the
        // ranks'), so only what background work cannot change is compared there
        CacheStats stats = await(cache.stats(), "the cache's stats");
        if (!stats.healthy()) {
            throw failure("a rank is down: " + stats.toJson().encode());
        }
        if (stats.pool().usedBlocks() != liveBlocks) {
            throw failure("the pool counts " + stats.pool().usedBlocks() + " blocks in use, the driver holds " + liveBlocks);
        }
        checks++;
        return snapshot;
    }

    /** Retires the fence, frees every block, trims: nothing is left mapped but quarantined pages. */
    private PoolSnapshot giveEverythingBack() {
        if (fence > 0) {
            submit("retired(" + fence + ")", cache.retired(fence), false);
            fence = 0;
        }
        for (Allocation blocks : live) {
            frees++;
            submit("free of " + blocks.size() + " blocks", cache.free(blocks), false);
        }
        live.clear();
        liveBlocks = 0;
        submit("the last trim", cache.trim(), false, true);
        PoolSnapshot end = check();
        if (end.ledger().mappedPages() != 0 || end.ledger().usedBlocks() != 0) {
            throw failure("after giving everything back the ledger still maps " + end.ledger().mappedPages() + " pages and uses "
                    + end.ledger().usedBlocks() + " blocks");
        }
        return end;
    }

    private static long heapAfterGc() {
        for (int i = 0; i < 3; i++) {
            System.gc();
        }
        return ManagementFactory.getMemoryMXBean().getHeapMemoryUsage().getUsed();
    }

    private <T> T await(Future<T> future, String what) {
        try {
            return Bounded.await(future, REST_BOUND, what);
        } catch (RuntimeException e) {
            throw failure(what + ": " + e.getMessage());
        }
    }

    private SoakFailure failure(String message) {
        return new SoakFailure("soak with seed " + options.seed() + ", after " + op + " operations: " + message);
    }

    /** A broken rule, with the seed and the operation it was found at. */
    public static final class SoakFailure extends IllegalStateException {
        public SoakFailure(String message) {
            super(message);
        }
    }
}
