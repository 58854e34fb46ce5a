package io.kvpager.impl.coordinator;

import io.kvpager.core.PageMapFailure;
import io.kvpager.core.PageMapper;
import io.kvpager.impl.broker.PoolBudget;
import io.vertx.core.Future;

import java.util.concurrent.CompletionStage;

/**
 * A {@link PageMapper} that draws on the GPUs' budgets around another: a map first takes the
 * budget of its pages (a refusal is the map's failure, so the allocation misses with
 * {@link io.kvpager.MissReason#LIMIT}), and gives it back when the map fails; an unmap gives the
 * budget back once the pages are unmapped. Pages a failure quarantines may still hold memory on
 * some rank: their budget stays taken.
 */
final class BudgetedMapper implements PageMapper {

    private final PageMapper mapper;
    private final PoolBudget budget;

    BudgetedMapper(PageMapper mapper, PoolBudget budget) {
        this.mapper = mapper;
        this.budget = budget;
    }

    @Override
    public CompletionStage<Void> map(int[] pages) {
        if (!budget.brokered()) {
            return mapper.map(pages);
        }
        int[] batch = pages.clone();
        return budget.take(batch.length)
                .compose(taken -> Future.fromCompletionStage(mapper.map(batch)).recover(e -> {
                    Throwable cause = e instanceof java.util.concurrent.CompletionException c && c.getCause() != null ? c.getCause() : e;
                    int stuck = cause instanceof PageMapFailure f ? f.quarantined().length : 0;
                    return budget.give(batch.length - stuck).transform(given -> Future.<Void>failedFuture(cause));
                }))
                .toCompletionStage();
    }

    @Override
    public CompletionStage<Void> unmap(int[] pages) {
        if (!budget.brokered()) {
            return mapper.unmap(pages);
        }
        int count = pages.length;
        return Future.fromCompletionStage(mapper.unmap(pages)).compose(unmapped -> budget.give(count)).toCompletionStage();
    }
}
