package io.kvpager.cli.demo;

import java.util.HashSet;
import java.util.Set;

/**
 * What a static split of the same GPU would have refused for one model: each served allocation is
 * replayed against a fixed share, with the model's demand right after it (the blocks it held, in
 * whole page ids on every rank). Demand counts pages as if perfectly packed, so the count is a
 * floor: a real static pool would refuse at least this many.
 */
final class StaticSplit {

    private final long shareBytes;
    private final int blocksPerPage;
    private final long bytesPerPageId;
    private final Set<Integer> refusedRequests = new HashSet<>();
    private long refusedAllocs;
    private long peakDemandBytes;

    /**
     * @param shareBytes the model's fixed share of the GPU
     * @param blocksPerPage blocks in one page id
     * @param bytesPerPageId GPU bytes of one page id across all ranks
     */
    StaticSplit(long shareBytes, int blocksPerPage, long bytesPerPageId) {
        if (shareBytes < 0 || blocksPerPage <= 0 || bytesPerPageId <= 0) {
            throw new IllegalArgumentException("a static split needs a share >= 0 and positive page sizes");
        }
        this.shareBytes = shareBytes;
        this.blocksPerPage = blocksPerPage;
        this.bytesPerPageId = bytesPerPageId;
    }

    /** An allocation for {@code request} was served; the model now holds {@code blocksHeld} blocks. */
    void served(int request, long blocksHeld) {
        long pages = (blocksHeld + blocksPerPage - 1) / blocksPerPage;
        long demand = pages * bytesPerPageId;
        peakDemandBytes = Math.max(peakDemandBytes, demand);
        if (demand > shareBytes) {
            refusedAllocs++;
            refusedRequests.add(request);
        }
    }

    long shareBytes() {
        return shareBytes;
    }

    /** Allocations served here that the static share would have refused. */
    long refusedAllocs() {
        return refusedAllocs;
    }

    /** Requests with at least one such allocation: each would have been preempted at least once. */
    int refusedRequests() {
        return refusedRequests.size();
    }

    /** The highest demand seen, in GPU bytes. */
    long peakDemandBytes() {
        return peakDemandBytes;
    }
}
