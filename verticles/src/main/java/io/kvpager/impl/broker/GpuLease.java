package io.kvpager.impl.broker;

import io.kvpager.protocol.Owner;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.List;
import java.util.function.Supplier;

/**
 * One pool's lease on one GPU: the share of the GPU's budget it has taken in the cluster's shared
 * data ({@link #leased()}), and the part of it the pool's memory holds ({@link #held()}). A take that
 * fits in the lease is counted here and never crosses the cluster; one that does not extends the
 * lease by a chunk sized from the pool's recent demand (the bytes it took in the last second or
 * two, at most an eighth of the GPU, and never more than half of what the GPU would have left
 * free). The part the pool does not hold goes back after {@value #IDLE_MS} ms without a take, at
 * once when it passes the eighth of the GPU, and whenever another pool is refused for want of it
 * ({@link #yieldSurplus}).
 *
 * <p>The lease in the shared data is never below {@link #leased()}, which is never below
 * {@link #held()}: a lease grows there before it grows here, and shrinks here before it shrinks
 * there, and a take waiting for the broker counts as held meanwhile. So the pools' memory never
 * adds up to more than the GPU's capacity. Calls to the broker run one at a time. Runs on the
 * coordinator's context.
 */
final class GpuLease {

    /** A lease's surplus goes back after this long without a take. */
    static final long IDLE_MS = 1_000;
    /** The most a lease keeps above what it holds, as a fraction of the GPU: one eighth. */
    private static final int MOST_SURPLUS_PART = 8;

    private static final Logger log = LoggerFactory.getLogger(GpuLease.class);

    private final Vertx vertx;
    private final GpuBroker broker;
    private final String pool;
    private final Owner owner;
    private final List<String> ranks;
    private final long mostSurplus;
    private long leased;
    private long held;
    /** Bytes taken in the current window of {@value #IDLE_MS} ms and in the one before it. */
    private long demandNow;
    private long demandBefore;
    private long windowStartNanos = System.nanoTime();
    private long lastTakeNanos;
    private long idleTimer = -1;
    private boolean closed;
    private long brokerCalls;
    /** While giving memory back: the lease grows no further than the pool's guarantee, and its surplus goes back at once. */
    private long restrainedUntilNanos = System.nanoTime();
    /** The restraint lifts before its time once the pool holds no more than this: it gave back what it was asked. */
    private long restrainedAbove = -1;
    /** While a reclaim this pool asked for is pending here: its refused allocations wait for it instead of asking again. */
    private long reclaimingUntilNanos = System.nanoTime();
    private long reclaimsAsked;
    private long reclaimBlocksAsked;
    private long timesCapped;
    /** The last call to the broker; the next waits for it. */
    private Future<?> queue = Future.succeededFuture();

    /**
     * @param pool the pool's name in the GPU's shares
     * @param standing bytes the pool holds there already, its share as {@link GpuBroker#claim claimed}
     */
    GpuLease(Vertx vertx, GpuBroker broker, String pool, Owner owner, List<String> ranks, long standing) {
        this.vertx = vertx;
        this.broker = broker;
        this.pool = pool;
        this.owner = owner;
        this.ranks = List.copyOf(ranks);
        this.mostSurplus = broker.capacityBytes() / MOST_SURPLUS_PART;
        this.leased = standing;
        this.held = standing;
    }

    GpuBroker broker() {
        return broker;
    }

    List<String> ranks() {
        return ranks;
    }

    long leased() {
        return leased;
    }

    long held() {
        return held;
    }

    /** How many times the lease went to the broker. */
    long brokerCalls() {
        return brokerCalls;
    }

    /** Whether {@code bytes} more fit in the lease as it stands. */
    boolean fits(long bytes) {
        return held + bytes <= leased;
    }

    /** Takes {@code bytes} that {@link #fits fit}, here. */
    void takeHere(long bytes) {
        held += bytes;
        noteDemand(bytes);
        armIdle();
    }

    /**
     * Takes {@code bytes}, extending the lease when they do not fit: {@code true} when taken,
     * {@code false} when the other pools on the GPU leave no room for them.
     */
    Future<Boolean> take(long bytes) {
        if (fits(bytes)) {
            takeHere(bytes);
            return Future.succeededFuture(true);
        }
        return serially(() -> {
            if (closed) {
                return Future.failedFuture(new IllegalStateException("pool " + pool + " on gpu " + broker.gpu() + " is closed"));
            }
            if (fits(bytes)) {
                takeHere(bytes);
                return Future.succeededFuture(true);
            }
            held += bytes;
            noteDemand(bytes);
            long least = held;
            long most = least + Math.min(recentDemand(), mostSurplus);
            return broker.lease(pool, owner, least, most, restrained()).transform(ar -> {
                if (ar.succeeded() && ar.result() >= least) {
                    leased = ar.result();
                    armIdle();
                    return Future.succeededFuture(true);
                }
                held -= bytes;
                return ar.succeeded() ? Future.succeededFuture(false) : Future.failedFuture(ar.cause());
            });
        });
    }

    /** Gives {@code bytes} back to the lease; a surplus past an eighth of the GPU goes back to the broker at once. */
    void give(long bytes) {
        held -= bytes;
        if (held < 0) {
            log.error("pool {} on gpu {}: holds {} bytes after giving back {}: more was given back than taken", pool, broker.gpu(),
                    held, bytes);
            held = 0;
        }
        if (restrained()) {
            shrinkTo(held);
            liftRestraintAt(held);
        } else if (leased - held > mostSurplus) {
            shrinkTo(held + Math.min(recentDemand(), mostSurplus));
        }
        armIdle();
    }

    /**
     * Gives memory back for {@code ms}, or until the pool holds no more than {@code liftAtBytes}
     * (it gave back what it was asked), whichever comes first: no growth beyond the guarantee, every
     * byte freed goes back to the broker at once. Restrained longer, a pool that gave back in time
     * would have its next steps' allocations above its guarantee refused for nothing (the pool
     * that asked is kept from losing what came back by its wait in the shares, not by this).
     */
    void restrainFor(long ms, long liftAtBytes) {
        restrainedAbove = restrained() ? Math.min(restrainedAbove, liftAtBytes) : liftAtBytes;
        restrainedUntilNanos = Math.max(restrainedUntilNanos, System.nanoTime() + ms * 1_000_000);
        liftRestraintAt(leased);
    }

    /** Lifts the restraint if what the pool holds now is within what it was asked to come down to. */
    void liftRestraintIfGiven() {
        liftRestraintAt(leased);
    }

    private void liftRestraintAt(long bytes) {
        if (restrained() && bytes <= restrainedAbove) {
            restrainedUntilNanos = System.nanoTime();
        }
    }

    boolean restrained() {
        return System.nanoTime() - restrainedUntilNanos < 0;
    }

    /** A reclaim this pool asked for is pending here until {@code untilNanos}. */
    void reclaimingUntil(long untilNanos) {
        reclaimingUntilNanos = untilNanos;
    }

    /** When the reclaim pending here ends, or a time past when none is. */
    long reclaimingUntil() {
        return reclaimingUntilNanos;
    }

    void countReclaim(long blocks) {
        reclaimsAsked++;
        reclaimBlocksAsked += blocks;
    }

    void countCapped() {
        timesCapped++;
    }

    long reclaimsAsked() {
        return reclaimsAsked;
    }

    long reclaimBlocksAsked() {
        return reclaimBlocksAsked;
    }

    long timesCapped() {
        return timesCapped;
    }

    /** Gives the lease's surplus back to the broker now: another pool wants it. Completes with the bytes given back. */
    Future<Long> yieldSurplus() {
        long surplus = leased - held;
        return surplus <= 0 ? Future.succeededFuture(0L) : shrinkTo(held).map(surplus);
    }

    /** Gives the whole share back to the broker; nothing is taken after. */
    Future<Long> close() {
        closed = true;
        if (idleTimer >= 0) {
            vertx.cancelTimer(idleTimer);
        }
        return serially(() -> broker.release(pool, owner).onSuccess(bytes -> {
            leased = 0;
            held = 0;
        }));
    }

    private Future<Void> shrinkTo(long bytes) {
        if (bytes >= leased) {
            return Future.succeededFuture();
        }
        // here first, so that no take counts on the bytes while they go back
        leased = bytes;
        return serially(() -> {
            if (closed) {
                // the share is released, or is being: nothing to shrink
                return Future.<Void>succeededFuture();
            }
            // a take that waited for the broker meanwhile may hold more now
            long target = Math.max(leased, held);
            return broker.lease(pool, owner, target, target).transform(ar -> {
                if (ar.failed() && ar.cause() instanceof GpuBroker.ShareTakenOver taken) {
                    log.info("pool {} on gpu {}: nothing to give back: {}", pool, broker.gpu(), taken.getMessage());
                } else if (ar.failed() && onMinoritySide(ar.cause())) {
                    log.warn("pool {} on gpu {}: its lease is not given back while this node is on the smaller side of a split "
                            + "(too few members to write the GPU's books); the books are recomputed when the sides merge", pool, broker.gpu());
                } else if (ar.failed() || ar.result() < 0) {
                    log.error("pool {} on gpu {}: giving its lease back down to {} bytes failed: {}", pool, broker.gpu(), target,
                            ar.failed() ? ar.cause().getMessage() : "its share was gone and the other pools had taken the room");
                }
                return Future.<Void>succeededFuture();
            });
        });
    }

    private void armIdle() {
        armIdle(IDLE_MS);
    }

    /**
     * Whether {@code failure} is the cluster manager refusing a write of the books on a side of a
     * split with fewer members than the quorum ({@code --cluster-quorum}); named, not typed, as
     * this module sees only Vert.x's cluster SPI.
     */
    static boolean onMinoritySide(Throwable failure) {
        for (Throwable t = failure; t != null; t = t.getCause() == t ? null : t.getCause()) {
            if (t.getClass().getSimpleName().equals("SplitBrainProtectionException")) {
                return true;
            }
        }
        return false;
    }

    /** Checks for idleness in {@code delayMs}, unless a check is pending already. */
    private void armIdle(long delayMs) {
        if (idleTimer >= 0 || closed || leased <= held) {
            return;
        }
        idleTimer = vertx.setTimer(delayMs, t -> {
            idleTimer = -1;
            long idleMs = (System.nanoTime() - lastTakeNanos) / 1_000_000;
            if (closed) {
                return;
            }
            if (idleMs >= IDLE_MS) {
                shrinkTo(held);
            } else {
                armIdle(IDLE_MS - idleMs);
            }
        });
    }

    private void noteDemand(long bytes) {
        lastTakeNanos = System.nanoTime();
        rollDemand(lastTakeNanos);
        demandNow += bytes;
    }

    /** The bytes taken in the last one to two windows. */
    private long recentDemand() {
        rollDemand(System.nanoTime());
        return demandNow + demandBefore;
    }

    private void rollDemand(long nowNanos) {
        long windows = (nowNanos - windowStartNanos) / (IDLE_MS * 1_000_000);
        if (windows > 0) {
            demandBefore = windows == 1 ? demandNow : 0;
            demandNow = 0;
            windowStartNanos += windows * IDLE_MS * 1_000_000;
        }
    }

    /** Runs {@code call} to the broker after those before it. */
    private <T> Future<T> serially(Supplier<Future<T>> call) {
        Future<T> next = queue.transform(previous -> {
            brokerCalls++;
            return call.get();
        });
        queue = next.transform(done -> Future.succeededFuture());
        return next;
    }

    @Override
    public String toString() {
        return "GpuLease[" + pool + " on " + broker.gpu() + ", leased " + leased + ", held " + held + "]";
    }
}
