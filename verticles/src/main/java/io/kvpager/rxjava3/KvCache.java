package io.kvpager.rxjava3;

import io.kvpager.Allocation;
import io.kvpager.LimitResult;
import io.kvpager.cache.CacheStats;
import io.kvpager.cache.KvCacheOptions;
import io.kvpager.cache.RankViews;
import io.kvpager.cache.Reclaim;
import io.reactivex.rxjava3.core.BackpressureStrategy;
import io.reactivex.rxjava3.core.Flowable;
import io.reactivex.rxjava3.core.Completable;
import io.reactivex.rxjava3.core.Single;
import io.vertx.lang.rx.RxDelegate;
import io.vertx.lang.rx.RxGen;
import io.vertx.lang.rx.TypeArg;
import io.vertx.rxjava3.CompletableHelper;
import io.vertx.rxjava3.SingleHelper;
import io.vertx.rxjava3.impl.AsyncResultCompletable;
import io.vertx.rxjava3.impl.AsyncResultSingle;

import java.util.List;

/**
 * The RxJava 3 face of {@link io.kvpager.cache.KvCache}, in the shape vertx-rx-java3 generates:
 * {@code rxAlloc(n)} is lazy (the call happens on subscribe, once per subscription), {@code alloc(n)}
 * calls at once and caches its outcome.
 *
 * <p>Written by hand: vertx-codegen only wraps {@code @VertxGen} interfaces whose every type it
 * knows, and {@code free(int[])} takes a Java array, which codegen does not accept.
 */
@RxGen(io.kvpager.cache.KvCache.class)
public class KvCache implements RxDelegate {

    public static final TypeArg<KvCache> __TYPE_ARG = new TypeArg<>(
            obj -> new KvCache((io.kvpager.cache.KvCache) obj), KvCache::getDelegate);

    private final io.kvpager.cache.KvCache delegate;

    public KvCache(io.kvpager.cache.KvCache delegate) {
        this.delegate = delegate;
    }

    public KvCache(Object delegate) {
        this.delegate = (io.kvpager.cache.KvCache) delegate;
    }

    @Override
    public io.kvpager.cache.KvCache getDelegate() {
        return delegate;
    }

    public static KvCache newInstance(io.kvpager.cache.KvCache arg) {
        return arg != null ? new KvCache(arg) : null;
    }

    /** See {@link io.kvpager.cache.KvCache#deploy}; deploys at once. */
    public static Single<KvCache> deploy(io.vertx.rxjava3.core.Vertx vertx, KvCacheOptions options) {
        return eager(rxDeploy(vertx, options));
    }

    /** See {@link io.kvpager.cache.KvCache#deploy}; deploys on subscribe. */
    public static Single<KvCache> rxDeploy(io.vertx.rxjava3.core.Vertx vertx, KvCacheOptions options) {
        return AsyncResultSingle.toSingle(() -> io.kvpager.cache.KvCache.deploy(vertx.getDelegate(), options), KvCache::newInstance);
    }

    public KvCacheOptions options() {
        return delegate.options();
    }

    /** See {@link io.kvpager.cache.KvCache#context()}. */
    public io.vertx.rxjava3.core.Context context() {
        return io.vertx.rxjava3.core.Context.newInstance(delegate.context());
    }

    public Single<Allocation> alloc(int blocks) {
        return eager(rxAlloc(blocks));
    }

    public Single<Allocation> rxAlloc(int blocks) {
        return AsyncResultSingle.toSingle(() -> delegate.alloc(blocks), a -> a);
    }

    public Completable free(int[] blockIds) {
        return eager(rxFree(blockIds));
    }

    public Completable rxFree(int[] blockIds) {
        return AsyncResultCompletable.toCompletable(() -> delegate.free(blockIds));
    }

    public long fence() {
        return delegate.fence();
    }

    public Completable retired(long fence) {
        return eager(rxRetired(fence));
    }

    public Completable rxRetired(long fence) {
        return AsyncResultCompletable.toCompletable(() -> delegate.retired(fence));
    }

    public Single<Integer> availableBlocks() {
        return eager(rxAvailableBlocks());
    }

    public Single<Integer> rxAvailableBlocks() {
        return AsyncResultSingle.toSingle(delegate::availableBlocks, n -> n);
    }

    public Single<LimitResult> setMemoryLimit(long bytes, long revision) {
        return eager(rxSetMemoryLimit(bytes, revision));
    }

    public Single<LimitResult> rxSetMemoryLimit(long bytes, long revision) {
        return AsyncResultSingle.toSingle(() -> delegate.setMemoryLimit(bytes, revision), r -> r);
    }

    public Single<LimitResult> setMemoryLimit(long bytes) {
        return eager(rxSetMemoryLimit(bytes));
    }

    public Single<LimitResult> rxSetMemoryLimit(long bytes) {
        return AsyncResultSingle.toSingle(() -> delegate.setMemoryLimit(bytes), r -> r);
    }

    /** See {@link io.kvpager.cache.KvCache#views()}. */
    public Single<List<RankViews>> views() {
        return eager(rxViews());
    }

    public Single<List<RankViews>> rxViews() {
        return AsyncResultSingle.toSingle(delegate::views, v -> v);
    }

    public Single<CacheStats> stats() {
        return eager(rxStats());
    }

    public Single<CacheStats> rxStats() {
        return AsyncResultSingle.toSingle(delegate::stats, s -> s);
    }

    /**
     * The cache's {@link Reclaim}s, as they are raised (see
     * {@link io.kvpager.cache.KvCache#reclaimHandler}): each subscription sets the cache's reclaim
     * handler, from the subscribing thread's context, and removes it when it ends, so one
     * subscriber, or a handler set directly, receives them at a time; buffered when the subscriber
     * falls behind. Also on the event bus at {@link Reclaim#address}.
     */
    public Flowable<Reclaim> reclaims() {
        return Flowable.create(emitter -> {
            delegate.reclaimHandler(emitter::onNext);
            emitter.setCancellable(() -> delegate.reclaimHandler(null));
        }, BackpressureStrategy.BUFFER);
    }

    public Completable trim() {
        return eager(rxTrim());
    }

    public Completable rxTrim() {
        return AsyncResultCompletable.toCompletable(delegate::trim);
    }

    public Completable close() {
        return eager(rxClose());
    }

    public Completable rxClose() {
        return AsyncResultCompletable.toCompletable(delegate::close);
    }

    /** Calls at once and keeps the outcome for every subscriber, as the generated non-rx methods do. */
    private static <T> Single<T> eager(Single<T> call) {
        Single<T> cached = call.cache();
        cached.subscribe(SingleHelper.nullObserver());
        return cached;
    }

    private static Completable eager(Completable call) {
        Completable cached = call.cache();
        cached.subscribe(CompletableHelper.nullObserver());
        return cached;
    }

    @Override
    public String toString() {
        return delegate.toString();
    }

    @Override
    public boolean equals(Object o) {
        if (this == o) {
            return true;
        }
        if (o == null || getClass() != o.getClass()) {
            return false;
        }
        return delegate.equals(((KvCache) o).delegate);
    }

    @Override
    public int hashCode() {
        return delegate.hashCode();
    }
}
