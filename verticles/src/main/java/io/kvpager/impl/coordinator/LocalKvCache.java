package io.kvpager.impl.coordinator;

import io.kvpager.internal.CoordinatorView;
import io.kvpager.protocol.PoolRanks;
import io.kvpager.protocol.RankTarget;
import io.kvpager.Allocation;
import io.kvpager.LimitResult;
import io.kvpager.cache.CacheStats;
import io.kvpager.cache.KvCache;
import io.kvpager.cache.KvCacheOptions;
import io.kvpager.cache.RankViews;
import io.kvpager.cache.Reclaim;
import io.kvpager.worker.RankWorker;
import io.kvpager.worker.RankWorkerOptions;
import io.vertx.core.Completable;
import io.vertx.core.Context;
import io.vertx.core.Future;
import io.vertx.core.Handler;
import io.vertx.core.Promise;
import io.vertx.core.Vertx;
import io.vertx.core.internal.PromiseInternal;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Supplier;

/**
 * A {@link KvCache} whose coordinator runs in this Vert.x instance: each call hops onto the
 * coordinator's context, or runs directly when the caller is on the coordinator's event-loop
 * thread (so that an allocation served from the reserve completes before {@code alloc} returns).
 * Every future it returns is bound to the caller's context ({@link ContextHandBack}); a caller
 * without one gets its callbacks on the cache's callback context, never on the coordinator's
 * event loop.
 *
 * <p>The hops of one {@code alloc} that maps, and the class that owns each:
 * <ol>
 * <li>the caller's thread to the coordinator's context, and the answer's way back: this class;</li>
 * <li>the cache's state (closed, started) and the one look at the lost ranks: {@link Coordinator};</li>
 * <li>the blocks claimed and the pages picked, on the coordinator's thread: the core's ledger;</li>
 * <li>the GPU budget, the rejoin of lost ranks when there are any, the all-or-nothing fan-out and
 *     its compensation: {@link FanOutMapper} (budget in {@link io.kvpager.impl.broker.PoolBudget}, rejoin in
 *     {@link RankRejoin});</li>
 * <li>one request per rank over the event bus, its timeout and the replies: {@link RankFanOut};</li>
 * <li>the driver calls, on the rank's own thread: {@link io.kvpager.impl.worker.RankWorkerVerticle};</li>
 * </ol>
 * and back the same way: the replies on the coordinator's context, the ledger fills the blocks,
 * and the caller's promise completes, its callbacks dispatched to the caller's context.
 */
public final class LocalKvCache implements KvCache {

    private final Vertx vertx;
    private final CoordinatorVerticle verticle;
    private final Context context;
    private final Thread thread;
    private final String deployment;
    /** The local workers' deployment ids, each with the rank it serves. */
    private final Map<String, String> workerDeployments;
    private final ContextHandBack handBack;
    private Future<Void> closing;

    private LocalKvCache(Vertx vertx, CoordinatorVerticle verticle, String deployment, Map<String, String> workerDeployments,
                         ContextHandBack handBack) {
        this.vertx = vertx;
        this.verticle = verticle;
        this.context = verticle.context();
        this.thread = verticle.thread();
        this.deployment = deployment;
        this.workerDeployments = Map.copyOf(workerDeployments);
        this.handBack = handBack;
    }

    /** See {@link KvCache#deploy}. */
    public static Future<KvCache> deploy(Vertx vertx, KvCacheOptions options) {
        KvCacheOptions checked;
        try {
            if (vertx == null || options == null) {
                throw new IllegalArgumentException("deploy needs a Vert.x instance and options");
            }
            checked = new KvCacheOptions(options).validate();
        } catch (IllegalArgumentException e) {
            return Future.failedFuture(e);
        }
        ContextHandBack handBack = new ContextHandBack(vertx);
        PromiseInternal<KvCache> answer = handBack.promise();
        Map<String, String> workers = new LinkedHashMap<>();
        CoordinatorVerticle verticle = new CoordinatorVerticle();
        // checked before the workers too: a second cache's workers would answer at the first one's addresses
        CoordinatorVerticle.addressIsFree(vertx, checked)
                .compose(free -> checked.isLocalWorkers() ? deployWorkers(vertx, checked, workers) : Future.<Void>succeededFuture())
                .compose(v -> vertx.deployVerticle(verticle, CoordinatorVerticle.deploymentOptions(checked)))
                .<KvCache>map(id -> new LocalKvCache(vertx, verticle, id, workers, handBack))
                .recover(e -> undeployAll(vertx, checked.getInstance(), workers).transform(undeployed -> Future.failedFuture(e)))
                .onComplete(answered(answer));
        return answer.future();
    }

    /** One worker per rank of the pool, all deployed before the coordinator starts; all or none. */
    private static Future<Void> deployWorkers(Vertx vertx, KvCacheOptions options, Map<String, String> deployed) {
        List<Future<String>> deploying = new ArrayList<>();
        List<RankTarget> ranks = PoolRanks.of(options).ranks();
        for (RankTarget rank : ranks) {
            RankWorkerOptions worker = new RankWorkerOptions().setInstance(options.getInstance()).setPp(rank.pp())
                    .setTp(rank.tp()).setDevice(options.getDevice()).setGpu(options.gpuOf(rank.pp(), rank.tp()))
                    .setSim(options.getSim()).setSendTimeoutMs(options.getSendTimeoutMs())
                    .setGpuMemoryPercent(options.getGpuMemoryPercent());
            deploying.add(RankWorker.deploy(vertx, worker).map(RankWorker::deploymentId));
        }
        return Future.join(deploying).transform(joined -> {
            Throwable first = null;
            for (int i = 0; i < deploying.size(); i++) {
                Future<String> f = deploying.get(i);
                if (f.succeeded()) {
                    deployed.put(f.result(), ranks.get(i).name());
                } else if (first == null) {
                    first = f.cause();
                }
            }
            return first == null ? Future.succeededFuture() : Future.failedFuture(first);
        });
    }

    /**
     * Undeploys the workers still deployed: one undeployed from outside, or with its Vert.x, is
     * already gone and has given its memory back. A failure names the rank and the cache.
     */
    private static Future<Void> undeployAll(Vertx vertx, String instance, Map<String, String> deployments) {
        List<Future<Void>> undeploying = new ArrayList<>();
        List<String> ranks = new ArrayList<>();
        for (Map.Entry<String, String> worker : deployments.entrySet()) {
            undeploying.add(undeployIfThere(vertx, worker.getKey()));
            ranks.add(worker.getValue());
        }
        return Future.join(undeploying).transform(joined -> {
            for (int i = 0; i < undeploying.size(); i++) {
                if (undeploying.get(i).failed()) {
                    Throwable cause = undeploying.get(i).cause();
                    return Future.failedFuture(new IllegalStateException("cache " + instance + ": stopping the worker of "
                            + ranks.get(i) + " failed: " + cause.getMessage(), cause));
                }
            }
            return Future.succeededFuture();
        });
    }

    /** Undeploys {@code deployment}; one that is not deployed (any more) is gone already, which is no failure. */
    private static Future<Void> undeployIfThere(Vertx vertx, String deployment) {
        if (!vertx.deploymentIDs().contains(deployment)) {
            return Future.succeededFuture();
        }
        return vertx.undeploy(deployment).recover(e -> vertx.deploymentIDs().contains(deployment)
                ? Future.failedFuture(e) : Future.succeededFuture());
    }

    @Override
    public KvCacheOptions options() {
        return new KvCacheOptions(verticle.coordinator().options());
    }

    @Override
    public Context context() {
        return context;
    }

    @Override
    public Future<Allocation> alloc(int blocks) {
        return onContext(() -> verticle.coordinator().alloc(blocks));
    }

    @Override
    public Future<Allocation> alloc(int blocks, int near) {
        return onContext(() -> verticle.coordinator().alloc(blocks, near));
    }

    @Override
    public Future<Void> free(List<Integer> blockIds) {
        int[] ids;
        try {
            ids = blockIds(blockIds);
        } catch (IllegalArgumentException e) {
            return onContext(() -> Future.failedFuture(e));
        }
        return onContext(() -> verticle.coordinator().free(ids));
    }

    @Override
    public Future<Void> free(Allocation allocation) {
        if (allocation == null) {
            return onContext(() -> Future.failedFuture(new IllegalArgumentException("an allocation to free is required")));
        }
        int[] ids = allocation.blocks();
        // the incarnation that handed them out: a later one refuses the free (DISPLACED) rather than free its own blocks of the same ids
        String handedBy = allocation.incarnation();
        return onContext(() -> verticle.coordinator().free(ids, handedBy));
    }

    /** The caller's ids, copied on its thread (it may reuse the list at once); {@code null} stays {@code null}, for the ledger to refuse. */
    private static int[] blockIds(List<Integer> blockIds) {
        if (blockIds == null) {
            return null;
        }
        int[] ids = new int[blockIds.size()];
        for (int i = 0; i < ids.length; i++) {
            Integer id = blockIds.get(i);
            if (id == null) {
                throw new IllegalArgumentException("block id " + i + " of " + ids.length + " to free is null");
            }
            ids[i] = id;
        }
        return ids;
    }

    @Override
    public Future<Long> fence() {
        return onContext(() -> Future.succeededFuture(verticle.coordinator().fence()));
    }

    @Override
    public Future<Void> retired(long fence) {
        return onContext(() -> verticle.coordinator().retired(fence));
    }

    @Override
    public Future<Integer> availableBlocks() {
        return onContext(() -> verticle.coordinator().availableBlocks());
    }

    @Override
    public Future<LimitResult> setMemoryLimit(long bytes, long revision) {
        return onContext(() -> verticle.coordinator().setMemoryLimit(bytes, revision));
    }

    @Override
    public Future<LimitResult> setMemoryLimit(long bytes) {
        return onContext(() -> verticle.coordinator().setMemoryLimit(bytes));
    }

    @Override
    public Future<List<RankViews>> views() {
        return onContext(() -> verticle.coordinator().views());
    }

    @Override
    public Future<CacheStats> stats() {
        return onContext(() -> verticle.coordinator().stats());
    }

    @Override
    public KvCache reclaimHandler(Handler<Reclaim> handler) {
        verticle.coordinator().reclaims().handler(handler);
        return this;
    }

    @Override
    public Future<Void> trim() {
        return onContext(() -> verticle.coordinator().trim());
    }

    /**
     * Undeploys the coordinator (which destroys the tensors on the ranks), then the local workers;
     * what was undeployed from outside already is skipped. There is one close: every call is
     * answered with the first one's outcome, on its own caller's context.
     */
    @Override
    public Future<Void> close() {
        PromiseInternal<Void> answer = handBack.promise();
        closeOnce().onComplete(answered(answer));
        return answer.future();
    }

    private synchronized Future<Void> closeOnce() {
        if (closing == null) {
            String instance = verticle.coordinator().pool().instance();
            closing = undeployIfThere(vertx, deployment).transform(coordinatorGone -> undeployAll(vertx, instance, workerDeployments)
                    .transform(workersGone -> coordinatorGone.failed() ? Future.<Void>failedFuture(coordinatorGone.cause())
                            : workersGone.failed() ? Future.<Void>failedFuture(workersGone.cause()) : Future.<Void>succeededFuture()));
        }
        return closing;
    }

    /** The coordinator verticle, for {@link CoordinatorView}. */
    public CoordinatorVerticle verticle() {
        return verticle;
    }

    @Override
    public String toString() {
        return "KvCache[" + verticle.coordinator().pool().instance() + " group " + verticle.coordinator().pool().group() + " stages "
                + verticle.coordinator().pool().stages() + " tp " + verticle.coordinator().pool().tp() + "]";
    }

    /**
     * Runs {@code work} on the coordinator's context (at once when this thread is its event loop)
     * and answers with a future bound to the caller's context.
     */
    private <T> Future<T> onContext(Supplier<Future<T>> work) {
        PromiseInternal<T> answer = handBack.promise();
        if (Thread.currentThread() == thread) {
            run(work).onComplete(answered(answer));
        } else {
            context.runOnContext(v -> run(work).onComplete(answered(answer)));
        }
        return answer.future();
    }

    private static <T> Future<T> run(Supplier<Future<T>> work) {
        try {
            return work.get();
        } catch (RuntimeException e) {
            return Future.failedFuture(e);
        }
    }

    /** {@code answer} as a completion handler (a promise is both a handler and a completable). */
    private static <T> Completable<T> answered(Promise<T> answer) {
        return answer;
    }
}
