package io.kvpager.harness.bench;

import io.kvpager.device.LocalPageMapper;
import io.kvpager.core.PageMapper;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;

/**
 * The floor under a fan-out: the same batch mapped or unmapped on each rank's device in turn, in
 * the calling thread. Stops at the first rank that fails (a benchmark's devices do not), so it is
 * no substitute for the fan-out's compensation.
 */
final class RankByRankMapper implements PageMapper {

    private final LocalPageMapper[] ranks;

    RankByRankMapper(LocalPageMapper[] ranks) {
        this.ranks = ranks.clone();
    }

    @Override
    public CompletionStage<Void> map(int[] pages) {
        for (LocalPageMapper rank : ranks) {
            rank.map(pages).toCompletableFuture().join();
        }
        return CompletableFuture.completedFuture(null);
    }

    @Override
    public CompletionStage<Void> unmap(int[] pages) {
        for (LocalPageMapper rank : ranks) {
            rank.unmap(pages).toCompletableFuture().join();
        }
        return CompletableFuture.completedFuture(null);
    }
}
