package io.kvpager.core;

import io.kvpager.MissReason;
import java.util.Map;

/**
 * A snapshot of one {@link PageLedger}.
 *
 * @param totalPages virtual page ids of the pool
 * @param blocksPerPage blocks in one page id
 * @param mappedPages pages holding memory: in use, reserve, reclaimed and being unmapped
 * @param inUsePages pages with blocks handed out or claimed
 * @param reservePages mapped idle pages kept for allocations
 * @param reclaimedPages mapped empty pages waiting to be unmapped (reusable meanwhile)
 * @param mappingPages pages whose map is in flight
 * @param unmappingPages pages whose unmap is in flight
 * @param quarantinedPages pages not handed out until every rank confirms them released: their state on some rank is unknown
 * @param freePages unmapped pages that may be mapped
 * @param usedBlocks blocks handed out or claimed by allocations waiting on a map
 * @param limitPages the memory limit in whole page ids
 * @param limitRevision the revision of the limit in force, -1 before the first change
 * @param lowMark the reserve's low mark in force
 * @param highMark the reserve's high mark in force
 * @param openFences batch fences opened and not yet retired
 * @param allocs allocations that handed out blocks
 * @param blocksAllocated blocks handed out, in total
 * @param blocksFreed blocks freed, in total
 * @param misses allocation misses by reason; reasons never seen are absent
 * @param maps page ids mapped, in total
 * @param unmaps page ids unmapped, in total
 * @param mapCalls map batches sent to the mapper
 * @param unmapCalls unmap batches sent to the mapper
 */
public record LedgerStats(
        int totalPages,
        int blocksPerPage,
        int mappedPages,
        int inUsePages,
        int reservePages,
        int reclaimedPages,
        int mappingPages,
        int unmappingPages,
        int quarantinedPages,
        int freePages,
        int usedBlocks,
        int limitPages,
        long limitRevision,
        int lowMark,
        int highMark,
        int openFences,
        long allocs,
        long blocksAllocated,
        long blocksFreed,
        Map<MissReason, Long> misses,
        long maps,
        long unmaps,
        long mapCalls,
        long unmapCalls) {

    public LedgerStats {
        misses = Map.copyOf(misses);
    }

    /** Misses for one reason. */
    public long missCount(MissReason reason) {
        return misses.getOrDefault(reason, 0L);
    }

    /** Misses for every reason together. */
    public long totalMisses() {
        long total = 0;
        for (long count : misses.values()) {
            total += count;
        }
        return total;
    }
}
