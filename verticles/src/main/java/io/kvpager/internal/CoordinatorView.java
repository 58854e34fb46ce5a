package io.kvpager.internal;

import io.kvpager.protocol.RankTarget;
import io.kvpager.cache.KvCache;
import io.kvpager.impl.coordinator.Coordinator;
import io.kvpager.impl.coordinator.LocalKvCache;
import io.kvpager.cache.KvCacheOptions;
import io.kvpager.core.PageLedger;
import io.kvpager.protocol.Owner;
import io.vertx.core.Context;
import io.vertx.core.Future;
import io.vertx.core.Promise;

import java.util.List;
import java.util.function.Function;

/**
 * The one door into the insides of a cache deployed in this Vert.x instance, for tests, the
 * harness and benchmarks: the coordinator's context, and reads of the coordinator and its ledger on
 * that context, where the single-threaded ledger may be touched. The production classes keep these
 * package-private; nothing a user calls goes through here.
 */
public final class CoordinatorView {

    private final LocalKvCache cache;

    private CoordinatorView(LocalKvCache cache) {
        this.cache = cache;
    }

    /**
     * @throws IllegalArgumentException when {@code cache} is not deployed in this Vert.x instance
     */
    public static CoordinatorView of(KvCache cache) {
        if (!(cache instanceof LocalKvCache local)) {
            throw new IllegalArgumentException("only a cache deployed in this Vert.x instance can be looked into, got " + cache);
        }
        return new CoordinatorView(local);
    }

    /** The coordinator verticle's context: run there what must run where the ledger runs. */
    public Context context() {
        return cache.verticle().context();
    }

    /**
     * What a reader sees of the coordinator, on its context.
     *
     * @param ledger the page ledger; touch it only inside {@link #call}
     * @param lostRanks the ranks that lost their tensors and have not rejoined yet
     * @param options the cache's options
     * @param owner the coordinator incarnation that owns the pool's tensors
     */
    public record Inside(PageLedger ledger, List<RankTarget> lostRanks, KvCacheOptions options, Owner owner) {
    }

    /** {@code read} applied to the coordinator's insides, on its context. */
    public <T> Future<T> call(Function<Inside, T> read) {
        Promise<T> promise = Promise.promise();
        context().runOnContext(v -> {
            try {
                Coordinator coordinator = cache.verticle().coordinator();
                promise.complete(read.apply(new Inside(coordinator.ledger(), coordinator.lostRanks(), coordinator.options(),
                        coordinator.owner())));
            } catch (RuntimeException e) {
                promise.fail(e);
            }
        });
        return promise.future();
    }

    /** Checks the ledger's invariants on the coordinator's context; fails with what it finds. */
    public Future<Void> invariantsHold() {
        return call(inside -> {
            inside.ledger().checkInvariants();
            return null;
        });
    }

    /**
     * The ledger, for a caller that is already on {@link #context()}.
     *
     * @throws IllegalStateException when called from another thread
     */
    public PageLedger ledgerHere() {
        if (Thread.currentThread() == cache.verticle().thread()) {
            return cache.verticle().coordinator().ledger();
        }
        throw new IllegalStateException("the ledger is read on the coordinator's own thread only, not on " + Thread.currentThread().getName());
    }
}
