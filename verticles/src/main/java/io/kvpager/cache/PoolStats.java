package io.kvpager.cache;

import io.kvpager.MissReason;
import io.vertx.core.json.JsonObject;

import java.util.EnumMap;
import java.util.Map;

/**
 * A pool's figures as its coordinator's ledger counts them. Page counts are page ids; each costs
 * {@code bytesPerPage} on every rank of the pool.
 *
 * @param mappedPages pages mapped on every rank (in use, reserve, reclaimed)
 * @param inUsePages pages holding at least one used block
 * @param reservePages mapped idle pages ready to be handed out
 * @param reclaimedPages empty mapped pages waiting for their fence to retire
 * @param quarantinedPages pages whose state on some rank is unknown; not handed out until
 *     every rank confirms them released
 * @param freePages unmapped pages
 * @param usedBlocks blocks handed out
 * @param limitPages the memory limit in whole pages
 * @param lowMark the reserve's low mark now
 * @param highMark the reserve's high mark now
 * @param allocs allocations served
 * @param misses allocation misses by reason
 * @param maps pages mapped since start
 * @param unmaps pages unmapped since start
 * @param bytesPerPage physical bytes one page id costs on one rank
 */
public record PoolStats(int mappedPages, int inUsePages, int reservePages, int reclaimedPages, int quarantinedPages,
                        int freePages, long usedBlocks, int limitPages, int lowMark, int highMark, long allocs,
                        Map<MissReason, Long> misses, long maps, long unmaps, long bytesPerPage) {

    public PoolStats {
        EnumMap<MissReason, Long> copy = new EnumMap<>(MissReason.class);
        copy.putAll(misses);
        misses = java.util.Collections.unmodifiableMap(copy);
    }

    /** All misses, whatever the reason. */
    public long missCount() {
        long n = 0;
        for (long m : misses.values()) {
            n += m;
        }
        return n;
    }

    /** Bytes mapped on each rank for this pool. */
    public long mappedBytesPerRank() {
        return mappedPages * bytesPerPage;
    }

    /** Reads back what {@link #toJson()} wrote; a missing or mistyped field, or an unknown miss reason, names itself. */
    public static PoolStats fromJson(JsonObject json) {
        Map<MissReason, Long> misses = new EnumMap<>(MissReason.class);
        JsonObject missJson = StatsJson.object(json, "misses");
        for (String reason : missJson.fieldNames()) {
            MissReason parsed;
            try {
                parsed = MissReason.valueOf(reason);
            } catch (IllegalArgumentException e) {
                throw new IllegalArgumentException("pool.misses has an unknown reason '" + reason + "'");
            }
            misses.put(parsed, StatsJson.number(missJson, reason));
        }
        return new PoolStats(StatsJson.integer(json, "mappedPages"), StatsJson.integer(json, "inUsePages"),
                StatsJson.integer(json, "reservePages"), StatsJson.integer(json, "reclaimedPages"),
                StatsJson.integer(json, "quarantinedPages"), StatsJson.integer(json, "freePages"), StatsJson.number(json, "usedBlocks"),
                StatsJson.integer(json, "limitPages"), StatsJson.integer(json, "lowMark"), StatsJson.integer(json, "highMark"),
                StatsJson.number(json, "allocs"), misses, StatsJson.number(json, "maps"), StatsJson.number(json, "unmaps"),
                StatsJson.number(json, "bytesPerPage"));
    }

    public JsonObject toJson() {
        JsonObject missJson = new JsonObject();
        misses.forEach((reason, n) -> missJson.put(reason.name(), n));
        return new JsonObject().put("mappedPages", mappedPages).put("inUsePages", inUsePages)
                .put("reservePages", reservePages).put("reclaimedPages", reclaimedPages)
                .put("quarantinedPages", quarantinedPages).put("freePages", freePages).put("usedBlocks", usedBlocks)
                .put("limitPages", limitPages).put("lowMark", lowMark).put("highMark", highMark).put("allocs", allocs)
                .put("misses", missJson).put("maps", maps).put("unmaps", unmaps).put("bytesPerPage", bytesPerPage);
    }
}
