package io.kvpager.metrics;

import io.kvpager.Allocation;
import io.kvpager.LimitResult;
import io.kvpager.cache.CacheStats;
import io.kvpager.cache.KvCache;
import io.kvpager.cache.KvCacheOptions;
import io.kvpager.cache.RankViews;
import io.kvpager.cache.Reclaim;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import io.vertx.core.Context;
import io.vertx.core.Future;
import java.util.List;
import io.vertx.core.Handler;
import java.util.concurrent.TimeUnit;

/**
 * A {@link KvCache} that times every {@code alloc} as its caller sees it, into the histogram
 * {@value #ALLOC} (tags {@code instance}, and {@code outcome}: {@code served}, {@code miss} with
 * the reason, or {@code failed}); every other call goes straight through.
 *
 * <pre>{@code
 * KvCache cache = MeteredKvCache.of(KvCache.deploy(vertx, options).await(), registry);
 * }</pre>
 */
public final class MeteredKvCache implements KvCache {

    /** The alloc latency histogram's name. */
    public static final String ALLOC = "kvpager.alloc";

    private final KvCache cache;
    private final MeterRegistry registry;
    private final String instance;

    private MeteredKvCache(KvCache cache, MeterRegistry registry) {
        this.cache = cache;
        this.registry = registry;
        this.instance = cache.options().getInstance();
    }

    public static KvCache of(KvCache cache, MeterRegistry registry) {
        return new MeteredKvCache(cache, registry);
    }

    @Override
    public Future<Allocation> alloc(int blocks) {
        return timed(cache.alloc(blocks));
    }

    @Override
    public Future<Allocation> alloc(int blocks, int near) {
        return timed(cache.alloc(blocks, near));
    }

    private Future<Allocation> timed(Future<Allocation> alloc) {
        long start = System.nanoTime();
        return alloc.andThen(ar -> {
            String outcome = ar.failed() ? "failed" : ar.result().isMiss() ? "miss" : "served";
            Timer.Builder timer = LatencyTimers.histogram(ALLOC, "Allocations as the caller sees them, from call to answer")
                    .tags("instance", instance, "outcome", outcome);
            if (ar.succeeded() && ar.result().isMiss()) {
                timer.tag("reason", ar.result().missReason().name());
            } else {
                timer.tag("reason", "");
            }
            timer.register(registry).record(System.nanoTime() - start, TimeUnit.NANOSECONDS);
        });
    }

    @Override
    public KvCacheOptions options() {
        return cache.options();
    }

    @Override
    public Future<Void> free(List<Integer> blockIds) {
        return cache.free(blockIds);
    }

    @Override
    public Future<Void> free(Allocation allocation) {
        return cache.free(allocation);
    }

    @Override
    public Context context() {
        return cache.context();
    }

    @Override
    public Future<Long> fence() {
        return cache.fence();
    }

    @Override
    public Future<Void> retired(long fence) {
        return cache.retired(fence);
    }

    @Override
    public Future<Integer> availableBlocks() {
        return cache.availableBlocks();
    }

    @Override
    public Future<LimitResult> setMemoryLimit(long bytes, long revision) {
        return cache.setMemoryLimit(bytes, revision);
    }

    @Override
    public Future<LimitResult> setMemoryLimit(long bytes) {
        return cache.setMemoryLimit(bytes);
    }

    @Override
    public Future<List<RankViews>> views() {
        return cache.views();
    }

    @Override
    public Future<CacheStats> stats() {
        return cache.stats();
    }

    @Override
    public KvCache reclaimHandler(Handler<Reclaim> handler) {
        cache.reclaimHandler(handler);
        return this;
    }

    @Override
    public Future<Void> trim() {
        return cache.trim();
    }

    @Override
    public Future<Void> close() {
        return cache.close();
    }
}
