package io.kvpager.impl.coordinator;

import io.kvpager.FailureCode;
import io.kvpager.impl.broker.PoolBudget;
import io.kvpager.protocol.KeepHandlesRequest;
import io.kvpager.protocol.WorkerAction;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.List;

/**
 * Unmapped handles the pool's ranks keep idle while its pages churn, so that a page id unmapped and
 * soon mapped again skips {@code cuMemRelease} and {@code cuMemCreate} (together about half a
 * one-page unmap's driver time and a quarter of a map's on an H200, docs/performance.md).
 *
 * <p>Sized from recent demand and counted as held: after an unmap of {@code n} page ids the ranks
 * are asked ({@code keep-handles}) to keep up to {@code min(n, most)} page ids' worth of handles for
 * the pool, once the GPUs' budget has taken that memory ({@link PoolBudget#take}); the count is
 * never below what any rank may keep. Each period of {@code periodMs} the count follows the largest
 * unmap of the period before, down to none when there was none; it is lowered on the ranks first,
 * and the budget is given back only once every rank confirmed (a rank with no worker or no tensors
 * of the pool keeps nothing for it). When another pool needs the GPU's memory, the broker's recall
 * lowers it to none first ({@link PoolBudget#beforeYield}). Nothing of this is on an allocation's
 * path: the change is sent after the unmap completed, and a refused take only means no handles are
 * kept.
 *
 * <p>Only a brokered pool keeps handles: without a GPU budget, nothing would count them. Runs on the
 * coordinator's context; never two changes at once.
 */
final class IdleHandles {

    private static final Logger log = LoggerFactory.getLogger(IdleHandles.class);

    private final RankFanOut fanOut;
    private final PoolBudget budget;
    private final int most;
    private final long periodMs;
    private final String pool;
    /** Page ids' worth of idle handles the budget counts for the pool: at least what any rank may keep. */
    private int counted;
    /** The largest unmap of this period, at most {@link #most}. */
    private int demand;
    /** The last change of the count; one in flight while it is not complete. */
    private Future<Void> change = Future.succeededFuture();
    private boolean stopped = true;
    private final PeriodicTimer timer;

    /**
     * @param most the most page ids' worth of idle handles the ranks keep; 0 keeps none
     * @param periodMs how long a count lasts without an unmap that needs it
     * @param pool the pool's name for log lines
     */
    IdleHandles(Vertx vertx, RankFanOut fanOut, PoolBudget budget, int most, long periodMs, String pool) {
        this.fanOut = fanOut;
        this.budget = budget;
        this.most = most;
        this.periodMs = periodMs;
        this.pool = pool;
        this.timer = new PeriodicTimer(vertx);
    }

    void start() {
        stopped = false;
        if (most > 0) {
            timer.start(periodMs, this::period);
        }
    }

    /** No more changes; {@link #idle()} still waits for the one in flight. The budget's close gives back what is counted. */
    void stop() {
        stopped = true;
        timer.stop();
    }

    /** Completes once no change is in flight. */
    Future<Void> idle() {
        return change;
    }

    /** An unmap of {@code pages} page ids completed on every rank. */
    void unmapped(int pages) {
        if (stopped || most == 0 || !budget.brokered()) {
            return;
        }
        demand = Math.max(demand, Math.min(pages, most));
        if (demand > counted && change.isComplete()) {
            raise(demand);
        }
    }

    /** Lowers the count to none, for a recall: another pool needs the GPU's memory. */
    Future<Void> yieldAll() {
        demand = 0;
        if (counted == 0) {
            return change;
        }
        return change.transform(done -> !change.isComplete() || counted == 0 ? change : lower(0));
    }

    private void period() {
        int target = demand;
        demand = 0;
        if (target < counted && change.isComplete()) {
            lower(target);
        }
    }

    private void raise(int target) {
        int more = target - counted;
        change = budget.take(more).transform(taken -> {
            if (taken.failed()) {
                log.debug("{}: keeping {} more page ids of idle handles refused: {}", pool, more, taken.cause().getMessage());
                return Future.succeededFuture();
            }
            if (stopped) {
                return budget.give(more);
            }
            // counted before any rank may keep them
            counted = target;
            return keep(target).mapEmpty();
        });
    }

    private Future<Void> lower(int target) {
        change = keep(target).compose(confirmed -> {
            if (!confirmed) {
                // some rank may still keep them: they stay counted, and the next period asks again
                return Future.<Void>succeededFuture();
            }
            int fewer = counted - target;
            counted = target;
            return budget.give(fewer);
        });
        return change;
    }

    /** Sends the count to every rank; whether every rank now keeps at most that many for the pool. */
    private Future<Boolean> keep(int target) {
        return fanOut.toAll(new KeepHandlesRequest(fanOut.pool().group(), fanOut.owner(), target))
                .map(replies -> confirmed(replies, target));
    }

    private boolean confirmed(List<RankReply> replies, int target) {
        boolean all = true;
        for (RankReply reply : replies) {
            if (reply.succeeded() || keepsNothing(reply.code())) {
                continue;
            }
            all = false;
            log.warn("{}: {} did not confirm keeping {} page ids of idle handles: {}", pool, reply.rank().name(), target,
                    reply.failure());
        }
        return all;
    }

    /**
     * A rank with no worker, no tensors of the pool, or that is stopping (and gives back everything)
     * keeps no handle for the pool. A conflict does not confirm: tensors half destroyed still keep theirs.
     */
    private static boolean keepsNothing(FailureCode code) {
        return code == FailureCode.NO_RANK || code == FailureCode.NO_TENSORS || code == FailureCode.STOPPING;
    }
}
