package io.kvpager.cli.demo;

import io.kvpager.Allocation;
import io.kvpager.FailureCode;
import io.kvpager.cache.KvCache;
import io.kvpager.cache.KvPagerException;
import io.kvpager.cache.RankFailure;
import io.vertx.core.Context;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.Vertx;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A toy serving engine for one model: continuous batching over one {@link KvCache}. Each decode
 * step is one batch: it retires the previous batch's fence (that batch's kernels are done), opens
 * a fence for its own, admits waiting requests, allocates the blocks its requests grow into (a
 * prefill chunk, or one decoded token: a new block every {@code blockTokens} tokens), and frees
 * the blocks of requests that finished. A miss preempts the request that missed: its blocks are
 * freed and it is retried a few steps later.
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

    private final ModelProfile model;
    private final KvCache cache;
    private final Context context;
    private final long stepMs;
    private final StaticSplit staticSplit;
    private final ArrayDeque<TraceRequest> arrivals;
    private final ArrayDeque<ServedRequest> waiting = new ArrayDeque<>();
    private final List<ServedRequest> running = new ArrayList<>();
    private final LatencyRecorder allocLatency = new LatencyRecorder();
    private final Map<DemoMiss, Long> misses = new EnumMap<>(DemoMiss.class);
    private final Map<String, Long> failures = new TreeMap<>();
    private long openFence = -1;
    private long arrived;
    private long served;
    private long tokens;
    private long allocs;
    private long preemptions;
    private long blocksHeld;
    private long unfinished;
    /** GPU kernels over each step's live sequences; the step's fence retires once they finished. */
    private BatchKernels kernels = BatchKernels.NONE;
    private Future<Void> kernelsDone = Future.succeededFuture();

    ModelServer(ModelProfile model, KvCache cache, Context context, long stepMs, List<TraceRequest> arrivals, StaticSplit staticSplit) {
        this.model = model;
        this.cache = cache;
        this.context = context;
        this.stepMs = stepMs;
        this.arrivals = new ArrayDeque<>(arrivals);
        this.staticSplit = staticSplit;
    }

    /** One decode step at {@code nowMs} from the start of the run; completes when the batch is scheduled. */
    Future<Void> step(long nowMs) {
        return kernelsDone.compose(v -> retireOpenFence()).compose(v -> {
            admit(nowMs);
            openFence = cache.fence();
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

    /** The step's kernels over every decoding request; a failure is counted, never left to block the fence. */
    private Future<Void> launchKernels() {
        List<ServedRequest> decoding = running.stream().filter(r -> !r.prefilling() && r.blockCount() > 0).toList();
        if (decoding.isEmpty()) {
            return Future.succeededFuture();
        }
        int[][] tables = decoding.stream().map(ServedRequest::blocks).toArray(int[][]::new);
        int[] lengths = decoding.stream().mapToInt(ServedRequest::tokensInCache).toArray();
        return onContext(kernels.launch(tables, lengths)).otherwise(failure -> {
            countFailure("attention", failure);
            return null;
        });
    }

    /** Ends the run: retires the open fence and frees every block still held; requests still running stay unserved. */
    Future<Void> drain() {
        unfinished = running.size() + waiting.size();
        List<Future<Void>> frees = new ArrayList<>();
        for (ServedRequest request : running) {
            frees.add(free(request, request.release()));
        }
        running.clear();
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
            waiting.add(new ServedRequest(arrivals.poll()));
            arrived++;
        }
        Iterator<ServedRequest> queue = waiting.iterator();
        while (queue.hasNext() && running.size() < MAX_BATCH) {
            ServedRequest request = queue.next();
            if (request.retryAtMs() <= nowMs) {
                queue.remove();
                running.add(request);
            }
        }
    }

    private Future<Void> grow(ServedRequest request, int tokensNow, int blocks, long nowMs) {
        long start = System.nanoTime();
        allocs++;
        return onContext(cache.alloc(blocks)).transform(ar -> {
            allocLatency.record(System.nanoTime() - start);
            if (ar.failed()) {
                countFailure("alloc", ar.cause());
                return preempt(request, nowMs);
            }
            Allocation allocation = ar.result();
            if (allocation.isMiss()) {
                misses.merge(DemoMiss.of(allocation), 1L, Long::sum);
                return preempt(request, nowMs);
            }
            blocksHeld += allocation.size();
            staticSplit.served(request.trace.id(), blocksHeld);
            return advance(request, tokensNow, allocation.blocks());
        });
    }

    private Future<Void> advance(ServedRequest request, int tokensNow, int[] newBlocks) {
        boolean decoding = !request.prefilling();
        request.advance(tokensNow, newBlocks);
        if (decoding) {
            tokens++;
        }
        if (!request.finished()) {
            return Future.succeededFuture();
        }
        running.remove(request);
        served++;
        return free(request, request.release());
    }

    private Future<Void> preempt(ServedRequest request, long nowMs) {
        preemptions++;
        running.remove(request);
        waiting.addFirst(request);
        return free(request, request.preempt(nowMs + RETRY_STEPS * stepMs));
    }

    private Future<Void> free(ServedRequest request, int[] blocks) {
        if (blocks.length == 0) {
            return Future.succeededFuture();
        }
        blocksHeld -= blocks.length;
        return onContext(cache.free(blocks)).otherwise(failure -> {
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

    StaticSplit staticSplit() {
        return staticSplit;
    }
}
