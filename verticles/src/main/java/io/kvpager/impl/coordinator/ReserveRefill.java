package io.kvpager.impl.coordinator;

import io.kvpager.FailureCode;
import io.kvpager.MissReason;
import io.kvpager.cache.KvPagerException;
import io.kvpager.core.PageLedger;
import io.kvpager.core.PageMapFailure;
import io.vertx.core.Context;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.function.Function;
import java.util.function.Supplier;

/**
 * The background work of a pool, off the callers' path: keep the reserve between its marks
 * ({@link PageLedger#refill()}) and unmap the reclaimed pages whose fences have retired
 * ({@link PageLedger#releaseReclaimed()}).
 *
 * <p>A round runs on a timer, and when an allocation left the reserve below its low mark; never
 * two at once. A round asked for while one runs runs right after it, so under load refills follow
 * each other one map round trip apart, as the adaptive marks expect. After a failed refill or
 * release both pause, twice as long each time, up to a second (a rank that is down fails every
 * round until it is back); a trim holds the refill until the next allocation, or it would map the
 * reserve straight back. Runs on the coordinator's context.
 */
final class ReserveRefill {

    private static final Logger log = LoggerFactory.getLogger(ReserveRefill.class);
    private static final long MAX_BACKOFF_MS = 1_000;

    private final Context context;
    private final PageLedger ledger;
    private final long intervalMs;
    private final String pool;
    private final Function<Throwable, RuntimeException> failures;
    private Future<Void> round = Future.succeededFuture();
    private boolean running;
    private boolean again;
    private boolean held;
    private boolean stopped = true;
    private final PeriodicTimer timer;
    private long pausedUntilNanos;
    private long backoffMs;
    private String failure;
    private boolean full;
    /** Rounds in a row whose refill or release failed for another reason than a full GPU or a limit. */
    private int failedRounds;

    /**
     * @param pool the pool's name for log lines
     * @param failures turns a ledger failure into what callers see
     */
    ReserveRefill(Vertx vertx, Context context, PageLedger ledger, long intervalMs, String pool,
                  Function<Throwable, RuntimeException> failures) {
        this.context = context;
        this.ledger = ledger;
        this.intervalMs = intervalMs;
        this.pool = pool;
        this.failures = failures;
        this.timer = new PeriodicTimer(vertx);
    }

    /** Starts the timer and a first round. */
    void start() {
        stopped = false;
        timer.start(intervalMs, this::run);
        run();
    }

    /** No more rounds; {@link #after} still waits for the one in flight. */
    void stop() {
        stopped = true;
        timer.stop();
    }

    /** An allocation happened: the refill is no longer held, and runs soon if the reserve is low. */
    void allocated() {
        held = false;
        if (!running && !stopped && ledger.refillDemand() > 0) {
            // after the allocating caller's callbacks, not before them
            context.runOnContext(v -> run());
        }
    }

    /** Asks for a round now, e.g. after a lower limit left idle pages to give back. */
    void wake() {
        run();
    }

    /** Holds the refill until the next allocation. */
    void hold() {
        held = true;
    }

    /** Runs {@code work} once the round in flight, if any, has finished. */
    <T> Future<T> after(Supplier<Future<T>> work) {
        return round.transform(ignored -> work.get());
    }

    /** Whether the rounds pause after a failure: work that would fail the same way waits for them. */
    boolean backingOff() {
        return System.nanoTime() < pausedUntilNanos;
    }

    /** The last refill or release failure since the last clean round, or {@code null}. */
    String failure() {
        return failure;
    }

    /**
     * How many rounds in a row failed for another reason than the GPU being full or the pool's
     * limit or share reached (the normal edge of sharing a GPU); 0 after a clean round.
     */
    int failedRounds() {
        return failedRounds;
    }

    private void run() {
        if (stopped) {
            return;
        }
        if (running) {
            again = true;
            return;
        }
        running = true;
        again = false;
        boolean backingOff = System.nanoTime() < pausedUntilNanos;
        boolean paused = held || backingOff;
        boolean[] faulty = new boolean[1];
        Future<Integer> refilled = paused ? Future.succeededFuture(0) : stage(ledger::refill).recover(e -> {
            failure = "refill: " + e.getMessage();
            long pause = backOff();
            // A refill that finds the device full, or the pool's share of the GPU taken, is the normal
            // edge of sharing a GPU, not a fault: said once at INFO when it starts, detail at DEBUG.
            if (gpuFull(e)) {
                if (!full) {
                    full = true;
                    log.info("{}: no GPU memory for the reserve now (this and other caches hold it); refills retry quietly", pool);
                }
                log.debug("{}: {}; next refill in {} ms", pool, failure, pause);
            } else {
                faulty[0] = true;
                log.warn("{}: {}; next refill in {} ms", pool, failure, pause);
            }
            return Future.succeededFuture(-1);
        });
        round = refilled.compose(mapped -> (backingOff ? Future.succeededFuture(0) : stage(ledger::releaseReclaimed)).recover(e -> {
            failure = "release: " + e.getMessage();
            faulty[0] = true;
            log.warn("{}: {}; next release in {} ms", pool, failure, backOff());
            return Future.succeededFuture(-1);
        }).map(released -> {
            if (faulty[0]) {
                failedRounds++;
            } else if (!backingOff && mapped >= 0 && released >= 0) {
                if (full && mapped > 0) {
                    full = false;
                    log.info("{}: the reserve refills again", pool);
                }
                backoffMs = 0;
                failedRounds = 0;
                if (!paused) {
                    failure = null;
                }
            }
            return (Void) null;
        })).onComplete(ar -> {
            running = false;
            if (again || (!held && ledger.refillDemand() > 0 && System.nanoTime() >= pausedUntilNanos)) {
                run();
            }
        });
    }

    /** Whether a refill failed only because the device, or the pool's share of the GPU, is full. */
    private static boolean gpuFull(Throwable e) {
        for (Throwable t = e; t != null; t = t.getCause()) {
            if (t instanceof PageMapFailure f) {
                return f.reason() == MissReason.OUT_OF_MEMORY || f.reason() == MissReason.LIMIT || f.reason() == MissReason.GPU_SHARE;
            }
            if (t instanceof KvPagerException k && k.code() == FailureCode.OUT_OF_MEMORY) {
                return true;
            }
        }
        return false;
    }

    /** Pauses the rounds, twice as long as the last time, up to {@link #MAX_BACKOFF_MS}; the pause in ms. */
    private long backOff() {
        backoffMs = Math.min(MAX_BACKOFF_MS, Math.max(intervalMs, backoffMs * 2));
        pausedUntilNanos = System.nanoTime() + backoffMs * 1_000_000;
        return backoffMs;
    }

    private Future<Integer> stage(Supplier<java.util.concurrent.CompletionStage<Integer>> call) {
        try {
            return Future.fromCompletionStage(call.get()).recover(e -> Future.failedFuture(failures.apply(e)));
        } catch (RuntimeException e) {
            return Future.failedFuture(failures.apply(e));
        }
    }
}
