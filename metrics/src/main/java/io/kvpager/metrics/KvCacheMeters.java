package io.kvpager.metrics;

import io.kvpager.MissReason;
import io.kvpager.cache.CacheStats;
import io.kvpager.cache.GpuStats;
import io.kvpager.cache.KvCache;
import io.kvpager.cache.PoolStats;
import io.kvpager.cache.RankStats;
import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.Meter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Tags;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.ToDoubleFunction;
import java.util.function.ToLongFunction;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * kvpager's meters for a set of caches, for any Micrometer {@link MeterRegistry}, read from their
 * {@link CacheStats}: pages by state, the limit, the reserve's marks, used blocks, GPU bytes
 * mapped, allocations, misses by reason, maps and unmaps, the GPU share each pool holds and what
 * all caches took on its GPU, health, and per rank its health, handles and device memory. Stats
 * are fetched every {@code periodMs} and the meters read the latest snapshot, because a scrape
 * cannot wait on the event bus. Latencies are measured elsewhere: {@link MeteredKvCache} (alloc,
 * in the caller's process) and {@link RankCallMeters} (event-bus calls).
 *
 * <pre>{@code
 * KvCacheMeters meters = new KvCacheMeters(vertx, registry, List.of(cache));
 * meters.start(1000).await();   // the first stats are in, the meters registered
 * ...
 * meters.close();               // the meters leave the registry
 * }</pre>
 */
public final class KvCacheMeters implements AutoCloseable {

    private static final Logger LOG = LoggerFactory.getLogger(KvCacheMeters.class);

    private final Vertx vertx;
    private final MeterRegistry registry;
    private final List<KvCache> caches;
    private final Map<String, CacheStats> latest = new ConcurrentHashMap<>();
    private final List<Meter> meters = new ArrayList<>();
    private long timer = -1;
    private boolean started;

    public KvCacheMeters(Vertx vertx, MeterRegistry registry, List<KvCache> caches) {
        this.vertx = vertx;
        this.registry = registry;
        this.caches = List.copyOf(caches);
    }

    /** Fetches the first stats, registers the meters, and keeps the stats fresh every {@code periodMs}. */
    public Future<Void> start(long periodMs) {
        if (periodMs <= 0) {
            throw new IllegalArgumentException("the refresh period must be positive, got " + periodMs + " ms");
        }
        if (started) {
            throw new IllegalStateException("the meters are started already");
        }
        started = true;
        return refresh().map(v -> {
            for (KvCache cache : caches) {
                register(cache.options().getInstance());
            }
            timer = vertx.setPeriodic(periodMs, id -> refresh());
            return null;
        });
    }

    /** Stops the refresh and removes the meters from the registry. */
    @Override
    public void close() {
        if (timer >= 0) {
            vertx.cancelTimer(timer);
        }
        meters.forEach(registry::remove);
        meters.clear();
    }

    /** The latest stats of {@code instance}, or {@code null} before the first. */
    public CacheStats latest(String instance) {
        return latest.get(instance);
    }

    private Future<Void> refresh() {
        List<Future<CacheStats>> all = new ArrayList<>();
        for (KvCache cache : caches) {
            String instance = cache.options().getInstance();
            all.add(cache.stats().onSuccess(stats -> latest.put(instance, stats))
                    .onFailure(e -> LOG.debug("stats of {} unavailable: {}", instance, e.getMessage())));
        }
        return Future.join(all).mapEmpty();
    }

    private void register(String instance) {
        Tags tags = Tags.of("instance", instance);
        pages(instance, tags, "mapped", PoolStats::mappedPages);
        pages(instance, tags, "in_use", PoolStats::inUsePages);
        pages(instance, tags, "reserve", PoolStats::reservePages);
        pages(instance, tags, "reclaimed", PoolStats::reclaimedPages);
        pages(instance, tags, "quarantined", PoolStats::quarantinedPages);
        pages(instance, tags, "free", PoolStats::freePages);
        gauge("kvpager.pages.limit", "The pool's memory limit in whole pages", tags, instance, s -> s.pool().limitPages(), null);
        gauge("kvpager.reserve.mark", "The reserve's marks now, in pages", tags.and("mark", "low"), instance, s -> s.pool().lowMark(), null);
        gauge("kvpager.reserve.mark", "The reserve's marks now, in pages", tags.and("mark", "high"), instance, s -> s.pool().highMark(), null);
        gauge("kvpager.blocks.used", "Blocks handed out", tags, instance, s -> s.pool().usedBlocks(), null);
        gauge("kvpager.memory.mapped", "GPU memory mapped for the pool, all ranks", tags, instance,
                s -> s.pool().mappedBytesPerRank() * s.ranks().size(), "bytes");
        gauge("kvpager.cache.ready", "1 when the cache is ready and every rank answers", tags, instance,
                s -> CacheHealth.of(s).state() == CacheHealth.State.READY ? 1 : 0, null);
        counter("kvpager.allocs", "Allocations served", tags, instance, s -> s.pool().allocs());
        counter("kvpager.page.maps", "Page ids mapped on every rank", tags, instance, s -> s.pool().maps());
        counter("kvpager.page.unmaps", "Page ids unmapped on every rank", tags, instance, s -> s.pool().unmaps());
        for (MissReason reason : MissReason.values()) {
            counter("kvpager.misses", "Allocation misses by reason", tags.and("reason", reason.name()), instance,
                    s -> s.pool().misses().getOrDefault(reason, 0L));
        }
        CacheStats first = latest.get(instance);
        if (first != null) {
            for (GpuStats gpu : first.gpus()) {
                Tags gpuTags = tags.and("gpu", gpu.gpu());
                String name = gpu.gpu();
                gauge("kvpager.gpu.share", "GPU memory this pool holds on the GPU (its share of the GPU's budget)", gpuTags, instance,
                        s -> gpuOf(s, name, GpuStats::heldBytes), "bytes");
                gauge("kvpager.gpu.taken", "GPU memory all caches on the GPU took from its budget", gpuTags, instance,
                        s -> gpuOf(s, name, GpuStats::takenBytes), "bytes");
                gauge("kvpager.gpu.capacity", "The GPU's budget that all caches on it share", gpuTags, instance,
                        s -> gpuOf(s, name, GpuStats::capacityBytes), "bytes");
            }
            for (RankStats rank : first.ranks()) {
                Tags rankTags = tags.and("rank", rank.rank());
                String name = rank.rank();
                gauge("kvpager.rank.up", "1 when the rank answers", rankTags, instance, s -> up(s.rank(name)), null);
                gauge("kvpager.rank.handles", "Driver handles of the pool alive on the rank (NaN while it does not answer)",
                        rankTags, instance, s -> ofAnswering(s.rank(name), RankStats::handles), null);
                gauge("kvpager.rank.device.used", "Device memory in use on the rank's GPU (NaN while the rank does not answer)",
                        rankTags, instance, s -> ofAnswering(s.rank(name), RankStats::deviceUsedBytes), "bytes");
            }
        }
    }

    private static double gpuOf(CacheStats stats, String gpu, ToLongFunction<GpuStats> value) {
        for (GpuStats g : stats.gpus()) {
            if (g.gpu().equals(gpu)) {
                long v = value.applyAsLong(g);
                return v < 0 ? Double.NaN : v;
            }
        }
        return Double.NaN;
    }

    /**
     * What a rank that answered said, or NaN: a rank that does not answer (or is not listed) holds
     * what nobody knows, not nothing.
     */
    static double ofAnswering(RankStats rank, ToLongFunction<RankStats> value) {
        return rank == null || !rank.up() ? Double.NaN : value.applyAsLong(rank);
    }

    private static double up(RankStats rank) {
        return rank != null && rank.up() ? 1 : 0;
    }

    private void pages(String instance, Tags tags, String state, ToDoubleFunction<PoolStats> count) {
        gauge("kvpager.pages", "Page ids of the pool by state", tags.and("state", state), instance, s -> count.applyAsDouble(s.pool()), null);
    }

    private void gauge(String name, String help, Tags tags, String instance, ToDoubleFunction<CacheStats> value, String unit) {
        meters.add(Gauge.builder(name, latest, all -> read(all.get(instance), value))
                .description(help).tags(tags).baseUnit(unit).register(registry));
    }

    private void counter(String name, String help, Tags tags, String instance, ToDoubleFunction<CacheStats> value) {
        meters.add(FunctionCounter.builder(name, latest, all -> read(all.get(instance), value))
                .description(help).tags(tags).register(registry));
    }

    private static double read(CacheStats stats, ToDoubleFunction<CacheStats> value) {
        return stats == null ? Double.NaN : value.applyAsDouble(stats);
    }
}
