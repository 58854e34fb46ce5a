package io.kvpager.cli.metrics;

import io.kvpager.CacheStats;
import io.kvpager.KvCache;
import io.kvpager.MissReason;
import io.kvpager.PoolStats;
import io.kvpager.RankStats;
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
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * kvpager's meters for a set of caches, read from their {@link CacheStats}: pages by state, the
 * limit, the reserve's marks, used blocks, GPU bytes mapped, allocations, misses by reason, maps
 * and unmaps, and per rank its health, handles and device memory. Stats are fetched every
 * {@code periodMs} and the meters read the latest snapshot, because a scrape cannot wait on the
 * event bus.
 */
final class CacheMeters {

    private static final Logger LOG = LoggerFactory.getLogger(CacheMeters.class);

    private final Vertx vertx;
    private final MeterRegistry registry;
    private final List<KvCache> caches;
    private final Map<String, CacheStats> latest = new ConcurrentHashMap<>();
    private final List<Meter> meters = new ArrayList<>();
    private long timer = -1;

    CacheMeters(Vertx vertx, MeterRegistry registry, List<KvCache> caches) {
        this.vertx = vertx;
        this.registry = registry;
        this.caches = List.copyOf(caches);
    }

    /** Fetches the first stats, registers the meters, and keeps the stats fresh. */
    Future<Void> start(long periodMs) {
        return refresh().map(v -> {
            for (KvCache cache : caches) {
                register(cache.options().getInstance());
            }
            timer = vertx.setPeriodic(periodMs, id -> refresh());
            return null;
        });
    }

    void stop() {
        if (timer >= 0) {
            vertx.cancelTimer(timer);
        }
        meters.forEach(registry::remove);
        meters.clear();
    }

    CacheStats latest(String instance) {
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
        gauge("kvpager.reserve.mark", "The reserve's low mark now", tags.and("mark", "low"), instance, s -> s.pool().lowMark(), null);
        gauge("kvpager.reserve.mark", "The reserve's high mark now", tags.and("mark", "high"), instance, s -> s.pool().highMark(), null);
        gauge("kvpager.blocks.used", "Blocks handed out", tags, instance, s -> s.pool().usedBlocks(), null);
        gauge("kvpager.memory.mapped", "GPU memory mapped for the pool, all ranks", tags, instance,
                s -> s.pool().mappedBytesPerRank() * s.ranks().size(), "bytes");
        gauge("kvpager.cache.ready", "1 when the cache is ready and every rank answers", tags, instance,
                s -> "ready".equals(s.state()) && s.healthy() ? 1 : 0, null);
        counter("kvpager.allocs", "Allocations served", tags, instance, s -> s.pool().allocs());
        counter("kvpager.page.maps", "Page ids mapped on every rank", tags, instance, s -> s.pool().maps());
        counter("kvpager.page.unmaps", "Page ids unmapped on every rank", tags, instance, s -> s.pool().unmaps());
        for (MissReason reason : MissReason.values()) {
            counter("kvpager.misses", "Allocation misses by reason", tags.and("reason", reason.name()), instance,
                    s -> s.pool().misses().getOrDefault(reason, 0L));
        }
        CacheStats first = latest.get(instance);
        if (first != null) {
            for (RankStats rank : first.ranks()) {
                Tags rankTags = tags.and("rank", rank.rank());
                String name = rank.rank();
                gauge("kvpager.rank.up", "1 when the rank answers", rankTags, instance, s -> up(s.rank(name)), null);
                gauge("kvpager.rank.handles", "Driver handles of the pool alive on the rank", rankTags, instance,
                        s -> s.rank(name) == null ? Double.NaN : s.rank(name).handles(), null);
                gauge("kvpager.rank.device.used", "Device memory in use on the rank's GPU", rankTags, instance,
                        s -> s.rank(name) == null ? Double.NaN : s.rank(name).deviceUsedBytes(), "bytes");
            }
        }
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
