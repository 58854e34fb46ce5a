package io.kvpager.bench;

import io.kvpager.Allocation;
import io.kvpager.cache.KvCache;
import io.kvpager.core.LedgerStats;
import io.kvpager.core.PageLedger;
import io.vertx.core.AsyncResult;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.Vertx;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Deque;
import java.util.List;

/**
 * An engine's allocation pattern, driven on the coordinator's own event loop so that an
 * allocation served from the reserve completes before {@code alloc} returns: every step retires
 * the last step's fence and opens a new one, admits arriving requests (their prompt's blocks),
 * grows each running sequence by one token (a block every 16 tokens) and frees finished ones.
 * An allocation that misses is retried on the next step.
 */
final class ServingLoop {

    static final int TOKENS_PER_BLOCK = 16;

    /** One request being served. */
    private static final class Sequence {
        final int promptTokens;
        final int outputTokens;
        int[] blocks = new int[8];
        int blockCount;
        int generated;
        boolean waiting;

        Sequence(BurstyTrace.Request r) {
            this.promptTokens = r.promptTokens();
            this.outputTokens = r.outputTokens();
        }

        int tokens() {
            return promptTokens + generated;
        }

        void add(Allocation a) {
            if (blockCount + a.size() > blocks.length) {
                blocks = Arrays.copyOf(blocks, Math.max(blocks.length * 2, blockCount + a.size()));
            }
            for (int i = 0; i < a.size(); i++) {
                blocks[blockCount++] = a.block(i);
            }
        }
    }

    private final Vertx vertx;
    private final KvCache cache;
    private final PageLedger ledger;
    private final BurstyTrace trace;
    private final int warmupSteps;
    private final Deque<Sequence> arriving = new ArrayDeque<>();
    private final List<Sequence> running = new ArrayList<>();
    private final LatencySamples latency = new LatencySamples();
    private long fence;
    private int step;
    private long allocs;
    private long servedAtOnce;
    private long misses;
    private long requests;
    private long peakInUsePages;
    private long extraPageSteps;
    private long reservePageSteps;
    private long maxExtraPages;
    private String maxExtraBreakdown = "";
    private long sampledSteps;

    ServingLoop(Vertx vertx, KvCache cache, PageLedger ledger, BurstyTrace trace, int warmupSteps) {
        this.vertx = vertx;
        this.cache = cache;
        this.ledger = ledger;
        this.trace = trace;
        this.warmupSteps = warmupSteps;
    }

    /** Runs {@code steps} steps, one every {@code stepMs}; call on the coordinator's context. */
    Future<ServingLoop> run(int steps, long stepMs) {
        Promise<ServingLoop> done = Promise.promise();
        vertx.setPeriodic(stepMs, timer -> {
            if (step == steps) {
                vertx.cancelTimer(timer);
                done.complete(this);
                return;
            }
            step();
        });
        return done.future();
    }

    private void step() {
        step++;
        if (fence > 0) {
            cache.retired(fence);
        }
        // on the coordinator's context the fence opens at once; its id comes with the answer
        cache.fence().onSuccess(id -> fence = id);
        for (BurstyTrace.Request r : trace.next()) {
            arriving.add(new Sequence(r));
            requests++;
        }
        for (Sequence s : List.copyOf(arriving)) {
            if (!s.waiting) {
                allocate(s, Math.ceilDiv(s.promptTokens, TOKENS_PER_BLOCK), true);
            }
        }
        for (int i = running.size() - 1; i >= 0; i--) {
            Sequence s = running.get(i);
            if (s.waiting) {
                continue;
            }
            if (s.generated == s.outputTokens) {
                cache.free(Arrays.stream(s.blocks, 0, s.blockCount).boxed().toList());
                running.set(i, running.getLast());
                running.removeLast();
                continue;
            }
            s.generated++;
            if (s.tokens() > s.blockCount * TOKENS_PER_BLOCK) {
                allocate(s, 1, false);
            }
        }
        if (step > warmupSteps) {
            LedgerStats stats = ledger.stats();
            long extra = stats.mappedPages() - stats.inUsePages();
            peakInUsePages = Math.max(peakInUsePages, stats.inUsePages());
            extraPageSteps += extra;
            reservePageSteps += stats.reservePages();
            if (extra > maxExtraPages) {
                maxExtraPages = extra;
                maxExtraBreakdown = "reserve " + stats.reservePages() + ", reclaimed " + stats.reclaimedPages() + ", unmapping "
                        + stats.unmappingPages() + ", in use " + stats.inUsePages() + ", marks " + stats.lowMark() + "/"
                        + stats.highMark() + " at step " + step;
            }
            sampledSteps++;
        }
    }

    private void allocate(Sequence s, int blocks, boolean admission) {
        s.waiting = true;
        long start = System.nanoTime();
        Future<Allocation> f = cache.alloc(blocks);
        if (f.isComplete()) {
            done(s, start, true, admission, f);
        } else {
            f.onComplete(ar -> done(s, start, false, admission, ar));
        }
    }

    private void done(Sequence s, long start, boolean atOnce, boolean admission, AsyncResult<Allocation> ar) {
        long nanos = System.nanoTime() - start;
        s.waiting = false;
        if (ar.failed()) {
            throw new IllegalStateException("alloc failed: " + ar.cause(), ar.cause());
        }
        if (step > warmupSteps) {
            allocs++;
            latency.add(nanos);
            servedAtOnce += atOnce ? 1 : 0;
        }
        Allocation a = ar.result();
        if (a.isMiss()) {
            misses++;
            if (!admission) {
                s.generated--; // the token waits for its block
            }
            return;
        }
        s.add(a);
        if (admission) {
            arriving.remove(s);
            running.add(s);
        }
    }

    long allocs() {
        return allocs;
    }

    long servedAtOnce() {
        return servedAtOnce;
    }

    long misses() {
        return misses;
    }

    long requests() {
        return requests;
    }

    LatencySamples latency() {
        return latency;
    }

    long peakInUsePages() {
        return peakInUsePages;
    }

    double meanExtraPages() {
        return sampledSteps == 0 ? 0 : (double) extraPageSteps / sampledSteps;
    }

    double meanReservePages() {
        return sampledSteps == 0 ? 0 : (double) reservePageSteps / sampledSteps;
    }

    long maxExtraPages() {
        return maxExtraPages;
    }

    /** Where the most extra memory was: reserve, reclaimed and unmapping pages, and the marks then. */
    String maxExtraBreakdown() {
        return maxExtraBreakdown;
    }
}
