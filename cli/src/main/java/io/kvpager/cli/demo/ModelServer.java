package io.kvpager.cli.demo;

import io.kvpager.Allocation;
import io.kvpager.FailureCode;
import io.kvpager.cache.KvCache;
import io.kvpager.cache.KvPagerException;
import io.kvpager.cache.RankFailure;
import io.kvpager.cache.Reclaim;
import io.vertx.core.Context;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.Vertx;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.BitSet;
import java.util.EnumMap;
import java.util.HashMap;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.function.LongSupplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A toy serving engine for one model: continuous batching over one {@link KvCache}. Each decode
 * step is one batch: it retires the previous batch's fence (that batch's kernels are done), opens
 * a fence for its own, admits waiting requests, allocates the blocks its requests grow into (a
 * prefill chunk, or one decoded token: a new block every {@code blockTokens} tokens), and frees
 * the blocks of requests that finished. A request grows near its own last block
 * ({@code KvCache.alloc(blocks, near)}): into that block's page while it has room, then into a
 * page of its own, so that few requests share a page and a request that ends or is preempted
 * empties its pages.
 *
 * <p>Admission allocates a request's whole context (its prompt, and its output so far after a
 * preemption, plus the block of its first decoded token) in one allocation, so that a request is
 * started only when its KV fits: one admission at a time, the request due soonest first
 * ({@link AdmissionOrder}: a new request by its time-to-first-token target, a preempted one by its
 * time-per-output-token target, each less the steps its prefill takes), in the background of the
 * steps (a step never waits for an admission, which may wait for a reclaim). A refused admission
 * leaves the request in its place in the queue until the next step. A running request whose new
 * block is refused sits the step out, keeping its KV, and asks again next step; refused
 * {@link #GROWTH_WAIT_STEPS} steps in a row, it preempts the running request that arrived last
 * (the one that asked tries again next step): its blocks are freed and it is retried
 * {@link #RETRY_STEPS} steps later. When the block was refused because the other models hold the
 * GPU ({@code GPU_SHARE}), no request is admitted for as long either: the memory the running
 * requests grow into is not handed to new ones, which would be preempted in turn and recomputed (a
 * thrash that costs more than it serves). A preempted request goes back to the queue in its due
 * place.
 *
 * <p>A {@link Reclaim} from the cache (another model needs memory this one borrowed) is answered
 * at the next step: the engine admits no request until it holds the pages asked for fewer than it
 * held when asked, and preempts running requests, chosen by page so that whole pages empty and
 * their memory goes back ({@link ReclaimVictims}); they may be admitted again as soon as admission
 * resumes, in their due place. After such a preemption the engine admits no request for
 * {@link #RECLAIM_HOLD_STEPS} steps (at most the reclaim's deadline), so that the blocks it freed
 * are not taken straight back before their pages empty and are unmapped. (A share of the deadline
 * can be left to turnover first, the pages its finishing requests empty: {@value #TURNOVER_PROPERTY};
 * measured, turnover gave back almost nothing within it and tripled the waiting model's reclaim
 * wait, so the default is none.)
 *
 * <p>Each request's time to first token (arrival to the decode step that produced its first output
 * token) and, once finished, its time per output token (first token to last, over the tokens after
 * the first) are measured on the run's clock and checked against the {@link ServiceTargets}.
 *
 * <p>Confined to one Vert.x context: every future the cache returns is brought back onto it
 * before the engine's state is touched.
 */
final class ModelServer {

    private static final Logger LOG = LoggerFactory.getLogger(ModelServer.class);

    /** Requests decoding at once. */
    static final int MAX_BATCH = 256;
    /** Prompt tokens prefilled per step, over all requests (chunked prefill). */
    static final int PREFILL_TOKENS_PER_STEP = 8192;
    /** A prefill chunk of one request in one step. */
    static final int PREFILL_CHUNK = 2048;
    /** Steps a preempted request waits before it is admitted again. */
    static final int RETRY_STEPS = 10;
    /**
     * Steps a reclaim holds admission for, at most its deadline: the blocks freed for it are read by
     * the open batch until its fence retires at the next step, then their pages empty and go back.
     */
    static final int RECLAIM_HOLD_STEPS = 3;
    /**
     * Steps in a row a running request's growth may be refused, sitting them out, before the engine
     * preempts (the latest arrival) to make room.
     */
    static final int GROWTH_WAIT_STEPS = 3;

    /**
     * {@code best-fit} to grow requests wherever the cache's best fit puts their blocks (as before
     * placement), for measuring what placement near a request's own last block changes.
     */
    static final String PLACEMENT_PROPERTY = "kvpager.demo.placement";

    /**
     * Percent of a reclaim's deadline left to turnover (the pages finishing requests empty) before
     * the engine preempts what is still owed; 0, the default, preempts at the next step.
     */
    static final String TURNOVER_PROPERTY = "kvpager.demo.turnoverPercent";

    /** {@value #TURNOVER_PROPERTY}, 0 when unset; anything but a percent from 0 to 100 is refused. */
    static int turnoverPercent() {
        String value = System.getProperty(TURNOVER_PROPERTY);
        if (value == null || value.isBlank()) {
            return 0;
        }
        try {
            int percent = Integer.parseInt(value.strip());
            if (percent >= 0 && percent <= 100) {
                return percent;
            }
        } catch (NumberFormatException e) {
            // refused below, with the value
        }
        throw new IllegalArgumentException(TURNOVER_PROPERTY + " must be a percent from 0 to 100, got '" + value + "'");
    }

    /** {@value #PLACEMENT_PROPERTY}: {@code near} (the default, when unset) or {@code best-fit}; anything else is refused. */
    static boolean growNear() {
        String value = System.getProperty(PLACEMENT_PROPERTY);
        if (value == null || value.isBlank() || value.strip().equals("near")) {
            return true;
        }
        if (value.strip().equals("best-fit")) {
            return false;
        }
        throw new IllegalArgumentException(PLACEMENT_PROPERTY + " must be near or best-fit, got '" + value + "'");
    }

    private final int turnoverPercent = turnoverPercent();
    private final ModelProfile model;
    private final boolean growNear = growNear();
    private final KvCache cache;
    private final Context context;
    private final long stepMs;
    /** Blocks in one page id: block {@code b} lies in page {@code b / blocksPerPage}. */
    private final int blocksPerPage;
    private final LongSupplier clockMs;
    private final ServiceTargets targets;
    /** The order waiting requests are admitted in. */
    private final AdmissionOrder order;
    private final ArrayDeque<TraceRequest> arrivals;
    private final List<ServedRequest> waiting = new ArrayList<>();
    private final List<ServedRequest> running = new ArrayList<>();
    /** Every request that arrived, in arrival order: for the request log. */
    private final List<ServedRequest> seen = new ArrayList<>();
    private final LatencyRecorder allocLatency = new LatencyRecorder();
    private final LatencyRecorder ttft = new LatencyRecorder();
    private final LatencyRecorder tpot = new LatencyRecorder();
    private final LatencyRecorder reclaimWait = new LatencyRecorder();
    private final Map<DemoMiss, Long> misses = new EnumMap<>(DemoMiss.class);
    private final Map<String, Long> failures = new TreeMap<>();
    private long openFence = -1;
    /** The admission allocation in flight, if any; completes once its request runs or waits again. */
    private Future<Void> admission = Future.succeededFuture();
    private boolean admitting;
    private boolean draining;
    private long arrived;
    private long served;
    private long tokens;
    private long allocs;
    private long preemptions;
    /** Tokens of KV thrown away by preemptions, to be computed again. */
    private long recomputedTokens;
    private long blocksHeld;
    private long unfinished;
    private long metTargets;
    private long reclaims;
    private long reclaimBlocksAsked;
    private long reclaimPreemptions;
    private long reclaimBlocksFreed;
    /** Holders per page held, summed over the steps that held a page, and those steps: the mean sharing of pages. */
    private double holdersPerPageSum;
    private long holdersPerPageSamples;
    /** Blocks held over the blocks of the pages they lie in, summed over the same steps: how full the pages in use are. */
    private double fillSum;
    /** The same at each reclaim asked. */
    private double holdersAtReclaimSum;
    private long pagesAskedByReclaims;
    /** Pages the open reclaim's engine held when asked, and whether its turnover was counted. */
    private long reclaimPagesAtAsk;
    private boolean reclaimTurnoverCounted;
    /** Pages reclaims got back by turnover (finishing requests) before any preemption, and by preempting. */
    private long pagesByTurnover;
    private long pagesByPreempting;
    /** Prompt (and output) tokens prefilled for the first time, prefilled again after a preemption, and request-steps sat out for a refused block. */
    private long prefillFirstTokens;
    private long prefillAgainTokens;
    private long satOutRequestSteps;
    /** Token-seconds of KV that preemptions threw away (sampled): memory held for work done again. */
    private double thrownTokenSeconds;
    /** When (run's clock, ms) the memory account last sampled the engine; -1 before. */
    private long lastMemorySampleMs = -1;
    /** Whether the latest admission was refused for want of memory (cleared by the next one served). */
    private boolean admissionRefused;
    /** When (run's clock, ms) the admission in flight was asked for. */
    private long admissionAskedMs;
    /** Whether a reclaim is being answered: no admission until it is. */
    private boolean reclaimOpen;
    /** The pages the engine is to hold at most once the open reclaim is answered. */
    private long reclaimTargetPages;
    /** From when (run's clock, ms) what the open reclaim still asks is preempted. */
    private long reclaimPreemptAtMs;
    /** When (run's clock, ms) the open reclaim's deadline passes: what is owed then is not owed later. */
    private long reclaimEndsAtMs;
    /** Whether the open reclaim preempted: admission is then held a few steps once it is answered. */
    private boolean reclaimPreempted;
    /** The latest deadline of the reclaims asked, ms from when asked. */
    private long reclaimDeadlineMs;
    /** Until when (run's clock, ms) no request is admitted after a reclaim: the freed blocks stay free. */
    private long admitHeldUntilMs = -1;
    /** GPU kernels over each step's live sequences; the step's fence retires once they finished. */
    private BatchKernels kernels = BatchKernels.NONE;
    private Future<Void> kernelsDone = Future.succeededFuture();

    /**
     * @param clockMs the run's clock, ms from its start: arrivals and latencies are measured on it
     */
    ModelServer(ModelProfile model, KvCache cache, Context context, long stepMs, int blocksPerPage, List<TraceRequest> arrivals,
            LongSupplier clockMs, ServiceTargets targets) {
        if (blocksPerPage < 1) {
            throw new IllegalArgumentException("a page holds at least one block, got " + blocksPerPage);
        }
        this.blocksPerPage = blocksPerPage;
        this.model = model;
        this.cache = cache;
        this.context = context;
        this.stepMs = stepMs;
        this.arrivals = new ArrayDeque<>(arrivals);
        this.clockMs = clockMs;
        this.targets = targets;
        this.order = new AdmissionOrder(targets, stepMs, PREFILL_CHUNK);
    }

    /** Takes the cache's reclaims from now on; call on the engine's context. */
    void answerReclaims() {
        cache.reclaimHandler(this::reclaimAsked);
    }

    private void reclaimAsked(Reclaim reclaim) {
        if (Vertx.currentContext() != context) {
            context.runOnContext(v -> reclaimAsked(reclaim));
            return;
        }
        reclaims++;
        reclaimBlocksAsked += reclaim.blocks();
        long pages = (reclaim.blocks() + blocksPerPage - 1) / blocksPerPage;
        pagesAskedByReclaims += pages;
        holdersAtReclaimSum += holdersPerPage();
        long nowMs = clockMs.getAsLong();
        // the turnover's share of the deadline (none by default); the rest is for the preempting step's
        // batch to retire and the pages to be unmapped, with room for steps longer than --step
        long preemptAtMs = nowMs + reclaim.deadlineMs() * turnoverPercent / 100;
        if (reclaimOpen) {
            reclaimTargetPages -= pages;
            reclaimPreemptAtMs = Math.min(reclaimPreemptAtMs, preemptAtMs);
            reclaimEndsAtMs = Math.max(reclaimEndsAtMs, nowMs + reclaim.deadlineMs());
        } else {
            reclaimOpen = true;
            reclaimPreempted = false;
            reclaimPagesAtAsk = pagesHeld();
            reclaimTurnoverCounted = false;
            reclaimTargetPages = reclaimPagesAtAsk - pages;
            reclaimPreemptAtMs = preemptAtMs;
            reclaimEndsAtMs = nowMs + reclaim.deadlineMs();
        }
        reclaimDeadlineMs = Math.max(reclaimDeadlineMs, reclaim.deadlineMs());
    }

    /**
     * Answers the open reclaim at the start of a step: done once the engine holds no more than the
     * pages it is to come down to (its finished requests emptied them), or at the deadline;
     * otherwise, once turnover's share of the deadline is over (none by default), preempts the
     * requests {@link ReclaimVictims} picks to empty the pages still owed, and again at each step
     * while some are (a page empties only once its every block is free).
     */
    private Future<Void> answerPendingReclaims(long nowMs) {
        if (!reclaimOpen) {
            return Future.succeededFuture();
        }
        long held = pagesHeld();
        long owedPages = held - reclaimTargetPages;
        if (owedPages <= 0 || nowMs >= reclaimEndsAtMs || nowMs >= reclaimPreemptAtMs) {
            countTurnover(held);
        }
        if (owedPages <= 0 || nowMs >= reclaimEndsAtMs) {
            reclaimOpen = false;
            if (reclaimPreempted) {
                // admitting now would take the freed blocks straight back: hold admission until their pages
                // have emptied and gone back (the fence of the batch that read them retires at the next
                // step), at most until the deadline; longer would stall this model's queue for nothing
                admitHeldUntilMs = nowMs + Math.min(reclaimDeadlineMs, RECLAIM_HOLD_STEPS * stepMs);
            }
            reclaimDeadlineMs = 0;
            return Future.succeededFuture();
        }
        if (nowMs < reclaimPreemptAtMs) {
            return Future.succeededFuture();
        }
        List<Future<Void>> frees = new ArrayList<>();
        for (ServedRequest victim : ReclaimVictims.choose(running, blocksPerPage, owedPages)) {
            reclaimBlocksFreed += victim.blockCount();
            reclaimPreemptions++;
            victim.reclaimPreemptions++;
            reclaimPreempted = true;
            frees.add(preempt(victim, nowMs, nowMs));
        }
        pagesByPreempting += Math.max(0, held - pagesHeld());
        return Future.join(frees).<Void>mapEmpty().otherwiseEmpty();
    }

    /** Once per reclaim, when turnover's time is up or it gave back all asked: the pages it gave back. */
    private void countTurnover(long held) {
        if (!reclaimTurnoverCounted) {
            reclaimTurnoverCounted = true;
            pagesByTurnover += Math.max(0, Math.min(reclaimPagesAtAsk - held, reclaimPagesAtAsk - reclaimTargetPages));
        }
    }

    /** Requests holding a block in a page, over the pages the running requests hold; 0 when none. */
    private double holdersPerPage() {
        HashMap<Integer, Integer> holders = new HashMap<>();
        for (ServedRequest request : running) {
            int last = -1;
            for (int block : request.blocks()) {
                int page = block / blocksPerPage;
                if (page != last) {
                    last = page;
                    holders.merge(page, 1, Integer::sum);
                }
            }
        }
        return holders.isEmpty() ? 0 : holders.values().stream().mapToInt(Integer::intValue).sum() / (double) holders.size();
    }

    /** The pages the running requests' blocks lie in: what the engine holds of the cache's memory. */
    private long pagesHeld() {
        BitSet pages = new BitSet();
        for (ServedRequest request : running) {
            for (int block : request.blocks()) {
                pages.set(block / blocksPerPage);
            }
        }
        return pages.cardinality();
    }

    /** One decode step, ticked at {@code tickMs} from the start of the run; completes when the batch is scheduled. */
    Future<Void> step(long tickMs) {
        long[] now = {tickMs};
        return kernelsDone.compose(v -> retireOpenFence()).compose(v -> {
            // the previous step's kernels may have run past the tick: admit what arrived until now
            now[0] = Math.max(tickMs, clockMs.getAsLong());
            return answerPendingReclaims(now[0]);
        }).compose(v -> {
            admit(now[0]);
            if (!running.isEmpty()) {
                holdersPerPageSum += holdersPerPage();
                long pages = pagesHeld();
                fillSum += pages == 0 ? 0 : running.stream().mapToLong(ServedRequest::blockCount).sum() / (double) (pages * blocksPerPage);
                holdersPerPageSamples++;
            }
            return cache.fence();
        }).compose(fence -> {
            long nowMs = now[0];
            openFence = fence;
            List<Future<Void>> work = new ArrayList<>();
            int prefillBudget = PREFILL_TOKENS_PER_STEP;
            for (ServedRequest request : List.copyOf(running)) {
                int chunk = Math.min(PREFILL_CHUNK, prefillBudget);
                if (request.prefilling() && chunk == 0) {
                    continue;
                }
                int tokensNow = request.tokensThisStep(chunk);
                if (request.prefilling()) {
                    prefillBudget -= tokensNow;
                }
                int blocks = request.blocksNeeded(tokensNow, model.blockTokens());
                work.add(blocks == 0 ? advance(request, tokensNow, new int[0]) : grow(request, tokensNow, blocks, nowMs));
            }
            return Future.join(work).<Void>mapEmpty().otherwiseEmpty();
        }).onSuccess(v -> kernelsDone = launchKernels());
    }

    void kernels(BatchKernels kernels) {
        this.kernels = kernels;
    }

    /**
     * The step's kernels: the weights' read, and attention over every decoding request; none when
     * nothing runs. A failure is counted, never left to block the fence.
     */
    private Future<Void> launchKernels() {
        if (running.isEmpty()) {
            return Future.succeededFuture();
        }
        List<ServedRequest> decoding = running.stream().filter(r -> !r.prefilling() && r.blockCount() > 0).toList();
        int[][] tables = decoding.stream().map(ServedRequest::blocks).toArray(int[][]::new);
        int[] lengths = decoding.stream().mapToInt(ServedRequest::tokensInCache).toArray();
        return onContext(kernels.launch(tables, lengths)).otherwise(failure -> {
            countFailure("attention", failure);
            return null;
        });
    }

    /** Ends the run: retires the open fence and frees every block still held; requests still running stay unserved. */
    Future<Void> drain() {
        draining = true;
        unfinished = running.size() + waiting.size() + (admitting ? 1 : 0);
        List<Future<Void>> frees = new ArrayList<>();
        for (ServedRequest request : running) {
            frees.add(free(request, request.release()));
        }
        running.clear();
        // an admission in flight frees what it is given once it lands (see admitNext)
        frees.add(admission);
        return Future.join(frees).otherwiseEmpty().compose(v -> kernelsDone).compose(v -> retireOpenFence());
    }

    private Future<Void> retireOpenFence() {
        if (openFence < 0) {
            return Future.succeededFuture();
        }
        long fence = openFence;
        openFence = -1;
        return onContext(cache.retired(fence)).otherwise(failure -> {
            countFailure("retire", failure);
            return null;
        });
    }

    private void admit(long nowMs) {
        while (!arrivals.isEmpty() && arrivals.peek().arrivalMs() <= nowMs) {
            ServedRequest request = new ServedRequest(arrivals.poll());
            requeue(request);
            seen.add(request);
            arrived++;
        }
        admitNext(nowMs);
    }

    /**
     * Admits the first waiting request whose turn has come, if none is being admitted, the batch
     * has room and no reclaim holds admission: allocates its context and, once that is served,
     * starts it and admits the next; a refusal stops admission until the next step.
     */
    private void admitNext(long nowMs) {
        if (admitting || draining || reclaimOpen || nowMs < admitHeldUntilMs || running.size() >= MAX_BATCH) {
            return;
        }
        ServedRequest request = null;
        for (Iterator<ServedRequest> queue = waiting.iterator(); queue.hasNext(); ) {
            ServedRequest candidate = queue.next();
            if (candidate.retryAtMs() <= nowMs) {
                queue.remove();
                request = candidate;
                break;
            }
        }
        if (request == null) {
            return;
        }
        ServedRequest admitted = request;
        admitting = true;
        admissionAskedMs = nowMs;
        long start = System.nanoTime();
        allocs++;
        // the admission in flight is known before its alloc can answer: one served at once lands in this
        // call, and the next admission it starts must not be overwritten by this one's (long done) future
        Promise<Void> landed = Promise.promise();
        admission = landed.future();
        onContext(cache.alloc(admitted.blocksToAdmit(model.blockTokens()))).transform(ar -> {
            admitting = false;
            allocLatency.record(System.nanoTime() - start);
            if (ar.failed()) {
                countFailure("admission alloc", ar.cause());
                requeue(admitted);
                return Future.succeededFuture();
            }
            Allocation allocation = ar.result();
            if (allocation.isMiss()) {
                misses.merge(DemoMiss.of(allocation), 1L, Long::sum);
                admitted.refusals++;
                admissionRefused = true;
                requeue(admitted);
                return Future.succeededFuture();
            }
            blocksHeld += allocation.size();
            admissionRefused = false;
            if (allocation.reclaimWaitNanos() > 0) {
                reclaimWait.record(allocation.reclaimWaitNanos());
            }
            admitted.reserve(allocation.blocks());
            if (admitted.admittedMs < 0) {
                admitted.admittedMs = clockMs.getAsLong();
            }
            if (draining) {
                return free(admitted, admitted.release());
            }
            running.add(admitted);
            admitNext(clockMs.getAsLong());
            return Future.<Void>succeededFuture();
        }).onComplete(landed);
    }

    private Future<Void> grow(ServedRequest request, int tokensNow, int blocks, long nowMs) {
        long start = System.nanoTime();
        allocs++;
        // near the request's own last block: its growth stays in its pages, so that its end (or its
        // preemption) empties them rather than leaving a block in a page other requests hold
        Future<Allocation> alloc = !growNear || request.blockCount() == 0 ? cache.alloc(blocks) : cache.alloc(blocks, request.lastBlock());
        return onContext(alloc).transform(ar -> {
            allocLatency.record(System.nanoTime() - start);
            if (ar.failed()) {
                countFailure("alloc", ar.cause());
                return running.contains(request) ? preempt(request, nowMs) : Future.succeededFuture();
            }
            Allocation allocation = ar.result();
            if (allocation.isMiss()) {
                DemoMiss miss = DemoMiss.of(allocation);
                misses.merge(miss, 1L, Long::sum);
                if (miss == DemoMiss.GPU_SHARE) {
                    // the other models hold the GPU: what this one's requests free next, its admissions
                    // and theirs would race for, and the running requests that need it to grow would be
                    // preempted and recomputed in turn; at its own limit it competes only with itself
                    admitHeldUntilMs = Math.max(admitHeldUntilMs, nowMs + RETRY_STEPS * stepMs);
                }
                if (!running.contains(request)) {
                    return Future.succeededFuture();
                }
                // the request sits this step out (it keeps its KV) and asks again next step: memory the
                // others free, or a reclaim's, often comes within a few steps, and preempting throws its
                // prefill and output away; only refused GROWTH_WAIT_STEPS steps in a row does it preempt
                if (++request.growthRefusedSteps < GROWTH_WAIT_STEPS) {
                    satOutRequestSteps++;
                    return Future.succeededFuture();
                }
                request.growthRefusedSteps = 0;
                return preempt(newestRunning(), nowMs);
            }
            request.growthRefusedSteps = 0;
            blocksHeld += allocation.size();
            if (allocation.reclaimWaitNanos() > 0) {
                reclaimWait.record(allocation.reclaimWaitNanos());
            }
            if (!running.contains(request)) {
                // preempted while its block was asked for (its step's miss chose it): the block goes back
                return free(request, allocation.blocks());
            }
            return advance(request, tokensNow, allocation.blocks());
        });
    }

    /**
     * The running request that arrived last: the one a refused block preempts, whichever request
     * asked for it; the others then grow into the blocks it frees. Not the one with the least KV
     * written: a request just admitted again after a preemption has the least, and would be chosen
     * again and again (measured: one request preempted 27 times in a 30 s run); by arrival, every
     * request is preempted only for requests older than it, as the queue admits them.
     * Called only while a request runs.
     */
    private ServedRequest newestRunning() {
        return running.stream().max(ServedRequest.BY_ARRIVAL).orElseThrow();
    }

    private Future<Void> advance(ServedRequest request, int tokensNow, int[] newBlocks) {
        boolean decoding = !request.prefilling();
        if (!decoding) {
            int again = Math.min(tokensNow, request.recomputeOwed);
            request.recomputeOwed -= again;
            prefillAgainTokens += again;
            prefillFirstTokens += tokensNow - again;
        }
        request.advance(tokensNow, newBlocks);
        if (decoding) {
            tokens++;
            if (request.generated() == 1) {
                request.firstTokenMs = clockMs.getAsLong();
                ttft.record(millisToNanos(request.firstTokenMs - request.trace.arrivalMs()));
            }
        }
        if (!request.finished()) {
            return Future.succeededFuture();
        }
        running.remove(request);
        request.tokenSeconds = 0;
        served++;
        request.finishedMs = clockMs.getAsLong();
        long firstMs = request.firstTokenMs - request.trace.arrivalMs();
        double perTokenMs = request.trace.outputTokens() <= 1 ? 0
                : (clockMs.getAsLong() - request.firstTokenMs) / (double) (request.trace.outputTokens() - 1);
        if (request.trace.outputTokens() > 1) {
            tpot.record(Math.round(perTokenMs * 1_000_000));
        }
        if (targets.met(firstMs, perTokenMs)) {
            metTargets++;
        }
        return free(request, request.release());
    }

    private Future<Void> preempt(ServedRequest request, long nowMs) {
        return preempt(request, nowMs, nowMs + RETRY_STEPS * stepMs);
    }

    /**
     * Preempts {@code request} until {@code retryAtMs}: it goes back to the queue in its due place
     * ({@link AdmissionOrder}): behind the requests that must start sooner to meet their targets.
     */
    private Future<Void> preempt(ServedRequest request, long nowMs, long retryAtMs) {
        preemptions++;
        thrownTokenSeconds += request.tokenSeconds;
        request.tokenSeconds = 0;
        recomputedTokens += request.tokensInCache();
        running.remove(request);
        requeue(request);
        return free(request, request.preempt(retryAtMs));
    }

    /** Puts {@code request} in the queue, which stays in {@link AdmissionOrder}. */
    private void requeue(ServedRequest request) {
        int at = 0;
        for (ServedRequest queued : waiting) {
            if (order.compare(queued, request) > 0) {
                break;
            }
            at++;
        }
        waiting.add(at, request);
    }


    private static long millisToNanos(long ms) {
        return Math.max(0, ms) * 1_000_000;
    }

    private Future<Void> free(ServedRequest request, int[] blocks) {
        if (blocks.length == 0) {
            return Future.succeededFuture();
        }
        blocksHeld -= blocks.length;
        return onContext(cache.free(Arrays.stream(blocks).boxed().toList())).otherwise(failure -> {
            countFailure("free of request " + request.trace.id(), failure);
            return null;
        });
    }

    /** One log line per failure: the cache's message names rank, group, page, code and driver error. */
    private void countFailure(String what, Throwable failure) {
        if (failure instanceof KvPagerException e) {
            failures.merge(e.code().name(), 1L, Long::sum);
            if (e.failures().isEmpty()) {
                LOG.warn("{} {} failed: {} ({})", model.instance(), what, e.getMessage(), e.code());
            }
            for (RankFailure rank : e.failures()) {
                LOG.warn("{} {} failed on {}: {} ({}): {}", model.instance(), what, rank.rank(), rank.code(),
                        rank.code().code(), rank.message());
            }
        } else {
            String code = failure instanceof IllegalArgumentException ? FailureCode.BAD_REQUEST.name() : failure.getClass().getSimpleName();
            failures.merge(code, 1L, Long::sum);
            LOG.warn("{} {} failed: {}: {}", model.instance(), what, code, failure.getMessage());
        }
    }

    private <T> Future<T> onContext(Future<T> future) {
        Promise<T> promise = Promise.promise();
        future.onComplete(ar -> {
            if (Vertx.currentContext() == context) {
                promise.handle(ar);
            } else {
                context.runOnContext(v -> promise.handle(ar));
            }
        });
        return promise.future();
    }

    /**
     * What the engine holds and whether it waits for memory now, for the memory account
     * ({@link MemoryAccount}); on the engine's context.
     */
    MemoryAccount.Engine memoryNow(long nowMs) {
        long written = 0;
        long blocks = 0;
        boolean growthRefused = false;
        double dt = lastMemorySampleMs < 0 ? 0 : Math.max(0, nowMs - lastMemorySampleMs) / 1000.0;
        lastMemorySampleMs = nowMs;
        for (ServedRequest request : running) {
            request.tokenSeconds += request.tokensInCache() * dt;
            written += request.tokensInCache();
            blocks += request.blockCount();
            growthRefused |= request.growthRefusedSteps > 0;
        }
        boolean ready = false;
        for (ServedRequest request : waiting) {
            if (request.retryAtMs() <= nowMs) {
                ready = true;
                break;
            }
        }
        MemoryAccount.Wait wait = MemoryAccount.Wait.NONE;
        if (growthRefused || ready && (admissionRefused || admitting && nowMs - admissionAskedMs > stepMs)) {
            wait = MemoryAccount.Wait.REFUSED;
        } else if (ready && !admitting && !draining && (reclaimOpen || nowMs < admitHeldUntilMs)) {
            wait = MemoryAccount.Wait.HELD;
        }
        return new MemoryAccount.Engine(written, blocks, wait, thrownTokenSeconds);
    }

    /** Tokens prefilled for the first time (prompts, and outputs of requests admitted again only beyond what they had). */
    long prefillFirstTokens() {
        return prefillFirstTokens;
    }

    /** Tokens prefilled again: KV a preemption threw away, computed again. */
    long prefillAgainTokens() {
        return prefillAgainTokens;
    }

    /** Request-steps a running request sat out, its block refused. */
    long satOutRequestSteps() {
        return satOutRequestSteps;
    }

    /** Every request that arrived, in arrival order, with when it got its first token. */
    List<ModelReport.Request> requests() {
        return seen.stream()
                .map(r -> new ModelReport.Request(r.trace.id(), r.trace.arrivalMs(), r.firstTokenMs, r.trace.promptTokens()))
                .toList();
    }

    /**
     * One line per request that arrived, for finding where latency comes from: id, arrival, first
     * admission, first token and finish (ms from the start, -1 when it never happened), prompt and
     * output tokens, tokens decoded, admissions refused, preemptions (of which to answer a reclaim).
     */
    List<String> requestLog() {
        List<String> lines = new ArrayList<>();
        for (ServedRequest r : seen) {
            lines.add(String.join(",", model.name(), String.valueOf(r.trace.id()), String.valueOf(r.trace.arrivalMs()),
                    String.valueOf(r.admittedMs), String.valueOf(r.firstTokenMs), String.valueOf(r.finishedMs),
                    String.valueOf(r.trace.promptTokens()), String.valueOf(r.trace.outputTokens()), String.valueOf(r.generated()),
                    String.valueOf(r.refusals), String.valueOf(r.preemptions()), String.valueOf(r.reclaimPreemptions)));
        }
        return lines;
    }

    ModelProfile model() {
        return model;
    }

    KvCache cache() {
        return cache;
    }

    long arrived() {
        return arrived;
    }

    long served() {
        return served;
    }

    long tokens() {
        return tokens;
    }

    long allocs() {
        return allocs;
    }

    long preemptions() {
        return preemptions;
    }

    /** Tokens whose KV preemptions threw away, each computed again when its request is admitted again. */
    long recomputedTokens() {
        return recomputedTokens;
    }

    long blocksHeld() {
        return blocksHeld;
    }

    int running() {
        return running.size();
    }

    /** Requests that had arrived but not finished when the run ended (running or waiting to be retried). */
    long unfinished() {
        return unfinished;
    }

    Map<DemoMiss, Long> misses() {
        return Map.copyOf(misses);
    }

    long totalMisses() {
        return misses.values().stream().mapToLong(Long::longValue).sum();
    }

    Map<String, Long> failures() {
        return Map.copyOf(failures);
    }

    LatencyRecorder allocLatency() {
        return allocLatency;
    }

    /** Times to first token of the requests that had one, arrival to first decode step. */
    LatencyRecorder ttft() {
        return ttft;
    }

    /** Times per output token of the finished requests of more than one output token. */
    LatencyRecorder tpot() {
        return tpot;
    }

    /** Finished requests that met both service targets. */
    long metTargets() {
        return metTargets;
    }

    /** How the running requests lay in pages, and what reclaims got back by turnover and by preempting. */
    ModelReport.Placement placement() {
        return new ModelReport.Placement(holdersPerPageSamples == 0 ? 0 : holdersPerPageSum / holdersPerPageSamples,
                holdersPerPageSamples == 0 ? 0 : fillSum / holdersPerPageSamples,
                reclaims == 0 ? 0 : holdersAtReclaimSum / reclaims, pagesAskedByReclaims, pagesByTurnover, pagesByPreempting, reclaimPreemptions);
    }

    /** Reclaims the cache asked of this engine. */
    long reclaims() {
        return reclaims;
    }

    long reclaimBlocksAsked() {
        return reclaimBlocksAsked;
    }

    long reclaimBlocksFreed() {
        return reclaimBlocksFreed;
    }

    /** Requests preempted to answer a reclaim (also counted in {@link #preemptions}). */
    long reclaimPreemptions() {
        return reclaimPreemptions;
    }

    /** For each allocation served after a reclaim: its refusal to its answer ({@code Allocation.reclaimWaitNanos}). */
    LatencyRecorder reclaimWait() {
        return reclaimWait;
    }
}
