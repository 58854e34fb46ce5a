package io.kvpager.impl.coordinator;

import io.kvpager.protocol.PagesRequest;
import io.kvpager.protocol.RankTarget;
import io.kvpager.FailureCode;
import io.kvpager.MissReason;
import io.kvpager.cache.KvPagerException;
import io.kvpager.cache.RankFailure;
import io.kvpager.core.PageMapFailure;
import io.kvpager.core.PageMapper;
import io.kvpager.impl.broker.PoolBudget;
import io.kvpager.protocol.PagesReply;
import io.kvpager.protocol.RequestFields;
import io.kvpager.protocol.WorkerAction;
import io.vertx.core.Future;
import io.vertx.core.json.JsonObject;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletionStage;

/**
 * The {@link PageMapper} of a cache: maps and unmaps a batch of page ids on every rank of the pool
 * through a {@link RankFanOut}, all or nothing, drawing on the GPUs' budgets on the way.
 *
 * <p>One map, in order: the budget of its pages is taken ({@link PoolBudget#take}; a refusal is
 * the map's failure, so the allocation misses with {@link MissReason#GPU_SHARE}); lost ranks are
 * brought back ({@link RankRejoin}, only when one is lost); the fan-out; on failure the budget is
 * given back, except for pages the failure quarantines, which may still hold memory on some rank.
 * An unmap gives the budget back once the pages are unmapped, then tells the {@link IdleHandles},
 * which may keep some of the handles it released next time. It is all Vert.x futures, on the
 * coordinator's context; the one {@link CompletionStage} is the one {@link PageMapper} answers the
 * ledger with, which lives in the Vert.x-free core.
 *
 * <p>Each rank applies a batch atomically, so after a fan-out a rank that failed holds none of the
 * batch's changes, a rank that answered holds all of them, and a rank that timed out may hold
 * either (its worker may still be working). When any rank failed, the opposite request goes to
 * every rank that answered. If the compensation fails too, the batch's state on the ranks is
 * unknown: its pages are quarantined, not to be handed out again until the {@link QuarantineSweep}
 * finds them released on every rank. So are they when a rank failed and says, in its failure's
 * {@code rollbackComplete} field, that it could not undo its part: it holds some of the batch.
 *
 * <p>A rank that timed out is never waited for twice: the caller hears the failure once the send
 * timeout has passed, with the batch quarantined, and the compensation is the sweep's, in the
 * background. A worker serves its requests one at a time, so the sweep's release runs there after
 * the late request, and the batch comes back once every rank has released it.
 *
 * <p>A rank that answers with no worker or no tensors is noted lost in the {@link RankRejoin};
 * while one cannot come back, nothing is sent (an unmap could not take effect on it, and its page
 * stays mapped and idle until it can). The rejoin counts this mapper's fan-outs in flight
 * ({@link RankRejoin#track}), so that it can wait for them to settle before it reads which pages
 * the rejoining rank must map.
 *
 * <p>The failure is a {@link PageMapFailure} whose cause is one {@link KvPagerException} listing
 * every failing rank, and whose miss reason is {@link MissReason#OUT_OF_MEMORY} when any rank ran
 * out of memory, {@link MissReason#RANK_DOWN} when a rank has no worker, else
 * {@link MissReason#MAP_FAILED}.
 */
public final class FanOutMapper implements PageMapper {

    private final RankFanOut fanOut;
    private final RankRejoin rejoin;
    /** The GPUs' budgets the pages are drawn from; {@code null} draws on none (benchmarks, tests). */
    private final PoolBudget budget;
    /** Told of every unmap that completed, to keep handles idle while pages churn; {@code null} keeps none. */
    private final IdleHandles idle;

    /** A mapper that draws on no GPU budget. */
    public FanOutMapper(RankFanOut fanOut, RankRejoin rejoin) {
        this(fanOut, rejoin, null, null);
    }

    FanOutMapper(RankFanOut fanOut, RankRejoin rejoin, PoolBudget budget, IdleHandles idle) {
        this.fanOut = fanOut;
        this.rejoin = rejoin;
        this.budget = budget;
        this.idle = idle;
    }

    @Override
    public CompletionStage<Void> map(int[] pages) {
        return mapBatch(pages.clone()).toCompletionStage();
    }

    @Override
    public CompletionStage<Void> unmap(int[] pages) {
        return unmapBatch(pages.clone()).toCompletionStage();
    }

    private Future<Void> mapBatch(int[] batch) {
        if (!brokered()) {
            return afterRejoin(WorkerAction.MAP, WorkerAction.UNMAP, batch);
        }
        return budget.take(batch.length).compose(taken -> afterRejoin(WorkerAction.MAP, WorkerAction.UNMAP, batch)
                .recover(cause -> {
                    int stuck = cause instanceof PageMapFailure f ? f.quarantined().length : 0;
                    return budget.give(batch.length - stuck).transform(given -> Future.<Void>failedFuture(cause));
                }));
    }

    private Future<Void> unmapBatch(int[] batch) {
        Future<Void> unmapped = afterRejoin(WorkerAction.UNMAP, WorkerAction.MAP, batch);
        if (!brokered()) {
            return unmapped;
        }
        return unmapped.compose(done -> budget.give(batch.length)).andThen(given -> {
            if (given.succeeded() && idle != null) {
                idle.unmapped(batch.length);
            }
        });
    }

    private boolean brokered() {
        return budget != null && budget.brokered();
    }

    /** The fan-out, once every lost rank is back; at once (no future in between) when none is lost. */
    private Future<Void> afterRejoin(WorkerAction action, WorkerAction inverse, int[] batch) {
        if (rejoin.allBack()) {
            return apply(action, inverse, batch);
        }
        return rejoin.rejoin().transform(rejoined -> {
            if (rejoined.succeeded()) {
                return apply(action, inverse, batch);
            }
            Throwable cause = rejoined.cause();
            MissReason reason = cause instanceof KvPagerException k && !k.failures().isEmpty()
                    ? reasonOf(k.failures()) : MissReason.RANK_DOWN;
            return Future.<Void>failedFuture(new PageMapFailure(reason, action.wireName() + " of " + describe(batch) + " in group "
                    + fanOut.pool().group() + " not sent: " + cause.getMessage(), null, cause));
        });
    }

    /** Sends {@code action} for {@code pages} to every rank; on any failure undoes it where it took or may have taken effect. */
    public Future<Void> apply(WorkerAction action, WorkerAction inverse, int[] pages) {
        if (pages.length == 0) {
            return Future.succeededFuture();
        }
        return rejoin.track(send(action, inverse, pages));
    }

    private PagesRequest pagesRequest(WorkerAction action, int[] batch) {
        return new PagesRequest(action, fanOut.nextRequestId(), fanOut.pool().group(), fanOut.owner(), batch);
    }

    private Future<Void> send(WorkerAction action, WorkerAction inverse, int[] pages) {
        int[] batch = pages.clone();
        return fanOut.toAll(pagesRequest(action, batch)).compose(replies -> {
            List<RankReply> checked = new ArrayList<>(replies.size());
            for (RankReply reply : replies) {
                checked.add(checkReply(reply, action, batch));
            }
            rejoin.noteLost(checked);
            List<RankFailure> failures = RankFanOut.failures(checked);
            if (failures.isEmpty()) {
                return Future.succeededFuture();
            }
            KvPagerException failure = KvPagerException.ofRanks(action.wireName() + " of " + describe(batch) + " in group "
                    + fanOut.pool().group(), checked.size(), failures);
            MissReason reason = reasonOf(failures);
            List<String> timedOut = new ArrayList<>();
            List<RankTarget> undo = new ArrayList<>();
            Set<RankTarget> unknown = new HashSet<>();
            List<RankFailure> partial = new ArrayList<>();
            for (RankReply reply : checked) {
                if (reply.succeeded()) {
                    undo.add(reply.rank());
                } else if (reply.code() == FailureCode.TIMEOUT) {
                    timedOut.add(reply.rank().name());
                } else if (reply.body() != null) {
                    // answered something other than the batch: its state is unknown
                    undo.add(reply.rank());
                    unknown.add(reply.rank());
                } else if (!reply.failure().rollbackComplete()) {
                    partial.add(reply.failure());
                }
            }
            if (!timedOut.isEmpty()) {
                // Waiting for a compensation that queues behind the late request would make the
                // caller wait a second timeout: the batch is quarantined now, and the sweep
                // releases it on every rank in the background, behind the late request there.
                KvPagerException reported = failure.withNote(describe(batch) + " quarantined: what "
                        + String.join(", ", timedOut) + " holds of it is unknown until it answers; released on every rank in the background");
                return Future.failedFuture(new PageMapFailure(reason, reported.getMessage(), batch, reported));
            }
            return fanOut.send(undo, pagesRequest(inverse, batch), fanOut.sendTimeoutMs()).compose(undone -> {
                List<RankFailure> stuck = new ArrayList<>();
                List<String> undoneOn = new ArrayList<>();
                for (RankReply reply : undone) {
                    if (reply.succeeded()) {
                        undoneOn.add(reply.rank().name());
                    } else if (!(unknown.contains(reply.rank()) && reply.code() == FailureCode.CONFLICT)) {
                        stuck.add(reply.failure());
                    }
                }
                StringBuilder note = new StringBuilder("compensation: ").append(inverse.wireName()).append(" again on ")
                        .append(undoneOn.isEmpty() ? "no rank" : String.join(", ", undoneOn));
                int[] quarantined = null;
                if (!stuck.isEmpty()) {
                    quarantined = batch;
                    note.append("; failed on ");
                    for (int i = 0; i < stuck.size(); i++) {
                        note.append(i == 0 ? "" : "; ").append(stuck.get(i));
                    }
                    note.append("; ").append(describe(batch)).append(" quarantined");
                } else if (!partial.isEmpty()) {
                    quarantined = batch;
                    note.append("; ").append(partlyHeld(partial, batch));
                }
                KvPagerException reported = failure.withNote(note.toString());
                return Future.failedFuture(new PageMapFailure(reason, reported.getMessage(), quarantined, reported));
            });
        });
    }

    /** A success that does not confirm exactly the batch counts as a failure with unknown state. */
    private static RankReply checkReply(RankReply reply, WorkerAction action, int[] batch) {
        if (!reply.succeeded() || confirms(reply.body(), action, batch)) {
            return reply;
        }
        return new RankReply(reply.rank(), reply.body(), new RankFailure(reply.rank().name(), FailureCode.DRIVER_ERROR,
                reply.rank().name() + " answered " + action.wireName() + " of " + describe(batch) + " with " + reply.body().encode()));
    }

    /** Whether {@code body} is a well-formed answer to {@code action} that confirms exactly {@code batch}. */
    static boolean confirms(JsonObject body, WorkerAction action, int[] batch) {
        try {
            return body != null && PagesReply.fromJson(action, body).confirms(batch);
        } catch (IllegalArgumentException malformed) {
            return false;
        }
    }

    private static String partlyHeld(List<RankFailure> partial, int[] batch) {
        List<String> ranks = new ArrayList<>(partial.size());
        for (RankFailure f : partial) {
            ranks.add(f.rank());
        }
        return String.join(", ", ranks) + " could not undo its part: " + describe(batch) + " quarantined";
    }

    static MissReason reasonOf(List<RankFailure> failures) {
        boolean down = false;
        for (RankFailure f : failures) {
            if (f.code() == FailureCode.OUT_OF_MEMORY) {
                return MissReason.OUT_OF_MEMORY;
            }
            // a stopping worker gives back everything it holds: the rank is on its way down
            down |= f.code() == FailureCode.NO_RANK || f.code() == FailureCode.STOPPING;
        }
        return down ? MissReason.RANK_DOWN : MissReason.MAP_FAILED;
    }

    private static String describe(int[] pages) {
        return (pages.length == 1 ? "page " + pages[0] : "pages " + Arrays.toString(pages));
    }
}
