package io.kvpager.cli.status;

import io.kvpager.cache.CacheStats;
import io.kvpager.cache.PoolStats;
import io.kvpager.cache.RankStats;
import io.kvpager.cli.text.ByteSize;
import io.kvpager.cli.text.TextTable;
import java.util.List;

/**
 * Turns instances' stats into text: one row per instance (state, limit, mapped memory, reserve,
 * blocks in use, misses, ranks up), then one row per rank (health, device, pages, handles, device
 * memory). Memory figures are per rank, as limits are. A cache that says it is ready while a rank
 * is down shows {@code degraded}.
 */
public final class StatusTable {

    private StatusTable() {
    }

    /**
     * The limit per rank, or the GPU's size where the limit exceeds it (a pool of many page ids
     * has a limit far above any GPU until one is set): the most a rank can map either way.
     */
    static String limit(CacheStats stats) {
        long limit = stats.pool().limitPages() * stats.pool().bytesPerPage();
        long gpu = stats.ranks().stream().filter(RankStats::up).mapToLong(RankStats::deviceTotalBytes).filter(b -> b > 0).min()
                .orElse(Long.MAX_VALUE);
        return limit > gpu ? ByteSize.format(gpu) + " (GPU)" : ByteSize.format(limit);
    }

    public static String render(List<InstanceStatus> instances) {
        if (instances.isEmpty()) {
            return "no cache instances\n";
        }
        TextTable caches = new TextTable("instance", "state", "ranks up", "limit/rank", "mapped/rank", "reserve", "in use",
                "used blocks", "allocs", "misses");
        TextTable ranks = new TextTable("instance", "rank", "health", "device", "mapped pages", "handles", "device used",
                "device total");
        StringBuilder problems = new StringBuilder();
        for (InstanceStatus status : instances) {
            CacheStats stats = status.stats();
            if (stats == null) {
                caches.row(status.instance(), "unreachable", "-", "-", "-", "-", "-", "-", "-", "-");
                problems.append(status.instance()).append(": ").append(status.failure()).append('\n');
                continue;
            }
            PoolStats pool = stats.pool();
            long up = stats.ranks().stream().filter(RankStats::up).count();
            caches.row(stats.instance(), status.state(), up + "/" + stats.ranks().size(),
                    limit(stats), ByteSize.format(pool.mappedBytesPerRank()),
                    pool.reservePages() + " pages", pool.inUsePages() + " pages", pool.usedBlocks(), pool.allocs(), pool.missCount());
            for (RankStats rank : stats.ranks()) {
                ranks.row(stats.instance(), rank.rank(), rank.up() ? "up" : "down", rank.up() ? rank.device() : "-",
                        rank.up() ? rank.mappedPages() : "-", rank.up() ? rank.handles() : "-",
                        rank.up() ? ByteSize.format(rank.deviceUsedBytes()) : "-",
                        rank.up() ? ByteSize.format(rank.deviceTotalBytes()) : "-");
                if (!rank.up() && rank.failure() != null) {
                    problems.append(stats.instance()).append(' ').append(rank.failure()).append('\n');
                }
            }
            if (stats.startFailure() != null) {
                problems.append(stats.instance()).append(" start failed: ").append(stats.startFailure()).append('\n');
            }
            if (stats.refillFailure() != null) {
                problems.append(stats.instance()).append(" refill failed: ").append(stats.refillFailure()).append('\n');
            }
        }
        StringBuilder out = new StringBuilder(caches.render());
        if (ranks.rows() > 0) {
            out.append('\n').append(ranks.render());
        }
        if (!problems.isEmpty()) {
            out.append('\n').append(problems);
        }
        return out.toString();
    }
}
