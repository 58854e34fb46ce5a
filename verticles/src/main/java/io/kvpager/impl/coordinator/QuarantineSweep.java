package io.kvpager.impl.coordinator;

import io.kvpager.protocol.PagesRequest;
import io.kvpager.FailureCode;
import io.kvpager.core.PageLedger;
import io.kvpager.impl.broker.PoolBudget;
import io.kvpager.protocol.RequestFields;
import io.kvpager.protocol.WorkerAction;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * Recovers the pool's quarantined pages, off the callers' path. A failed compensation or a failed
 * unmap leaves pages whose state on some rank is unknown; the ledger quarantines them, and without
 * this sweep they would never be handed out again and might hold device memory for good.
 *
 * <p>On a timer, while the ledger holds quarantined pages, a round sends {@code release-pages} for
 * all of them to every rank: each rank unmaps and releases whatever it holds of them and confirms
 * every one {@code clean}, or says it has no tensors of the group (so holds none of them). Only when
 * every rank confirmed every page do they go back to FREE
 * ({@link PageLedger#recovered}) and their GPU budget back to the broker. Any other answer leaves
 * them quarantined and pauses the sweep, twice as long each time up to {@link #MAX_BACKOFF_MS}, so
 * that a rank that is down is not asked over and over. A worker serves its requests in order, so a
 * release sent after a request that timed out there runs after it, and finds what it left.
 *
 * <p>Never two rounds at once. Runs on the coordinator's context.
 */
final class QuarantineSweep {

    private static final Logger log = LoggerFactory.getLogger(QuarantineSweep.class);
    static final long MAX_BACKOFF_MS = 5_000;

    private final PageLedger ledger;
    private final RankFanOut fanOut;
    private final PoolBudget budget;
    private final long intervalMs;
    private final String pool;
    private Future<Void> round = Future.succeededFuture();
    private boolean running;
    private boolean stopped = true;
    private final PeriodicTimer timer;
    private long pausedUntilNanos;
    private long backoffMs;

    /** @param pool the pool's name for log lines */
    QuarantineSweep(Vertx vertx, PageLedger ledger, RankFanOut fanOut, PoolBudget budget, long intervalMs, String pool) {
        this.ledger = ledger;
        this.fanOut = fanOut;
        this.budget = budget;
        this.intervalMs = intervalMs;
        this.pool = pool;
        this.timer = new PeriodicTimer(vertx);
    }

    void start() {
        stopped = false;
        timer.start(intervalMs, this::run);
    }

    /** No more rounds; {@link #idle()} still waits for the one in flight. */
    void stop() {
        stopped = true;
        timer.stop();
    }

    /** Completes once no round is in flight. */
    Future<Void> idle() {
        return round;
    }

    private void run() {
        if (stopped || running || System.nanoTime() < pausedUntilNanos) {
            return;
        }
        int[] pages = ledger.quarantined();
        if (pages.length == 0) {
            return;
        }
        running = true;
        round = fanOut.toAll(new PagesRequest(WorkerAction.RELEASE_PAGES, fanOut.nextRequestId(), fanOut.pool().group(),
                        fanOut.owner(), pages))
                .compose(replies -> stopped ? Future.succeededFuture() : settle(pages, replies))
                .andThen(done -> running = false);
    }

    private Future<Void> settle(int[] pages, List<RankReply> replies) {
        List<String> unconfirmed = new ArrayList<>();
        for (RankReply reply : replies) {
            if (!reply.succeeded() && reply.code() == FailureCode.NO_TENSORS) {
                // the rank has no tensors of the group: it holds nothing of these pages (it gave them back
                // with the group); the next request to it finds the rank lost and brings it back
                continue;
            }
            if (!reply.succeeded()) {
                unconfirmed.add(reply.failure().toString());
            } else if (!FanOutMapper.confirms(reply.body(), WorkerAction.RELEASE_PAGES, pages)) {
                unconfirmed.add(reply.rank().name() + " answered " + (reply.body() == null ? "nothing" : reply.body().encode()));
            }
        }
        if (!unconfirmed.isEmpty()) {
            backoffMs = Math.min(MAX_BACKOFF_MS, Math.max(intervalMs, backoffMs * 2));
            pausedUntilNanos = System.nanoTime() + backoffMs * 1_000_000;
            log.warn("{}: quarantined pages {} not recovered: {}; next try in {} ms", pool, Arrays.toString(pages),
                    String.join("; ", unconfirmed), backoffMs);
            return Future.succeededFuture();
        }
        backoffMs = 0;
        ledger.recovered(pages);
        log.info("{}: quarantined pages {} released on every rank and free again", pool, Arrays.toString(pages));
        // their memory was never given back to the GPUs' brokers: it might still have been held
        return budget.give(pages.length);
    }
}
