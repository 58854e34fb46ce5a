package io.kvpager.impl.coordinator;

import io.kvpager.Allocation;
import io.kvpager.LimitResult;
import io.kvpager.cache.CacheStats;
import io.kvpager.cache.KvCache;
import io.kvpager.cache.KvCacheOptions;
import io.kvpager.worker.RankWorker;
import io.kvpager.worker.RankWorkerOptions;
import io.vertx.core.AsyncResult;
import io.vertx.core.Context;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.Vertx;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Supplier;

/**
 * A {@link KvCache} whose coordinator runs in this Vert.x instance: each call hops onto the
 * coordinator's context, or runs directly when the caller is on the coordinator's event-loop
 * thread (so that an allocation served from the reserve completes before {@code alloc} returns);
 * its future completes on the caller's context when the caller has one.
 */
public final class LocalKvCache implements KvCache {

    private final Vertx vertx;
    private final CoordinatorVerticle verticle;
    private final Coordinator coordinator;
    private final Context context;
    private final Thread thread;
    private final String deployment;
    /** The local workers' deployment ids, each with the rank it serves. */
    private final Map<String, String> workerDeployments;
    private Future<Void> closing;

    private LocalKvCache(Vertx vertx, CoordinatorVerticle verticle, String deployment, Map<String, String> workerDeployments) {
        this.vertx = vertx;
        this.verticle = verticle;
        this.coordinator = verticle.coordinator();
        this.context = verticle.context();
        this.thread = verticle.thread();
        this.deployment = deployment;
        this.workerDeployments = Map.copyOf(workerDeployments);
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
        Map<String, String> workers = new LinkedHashMap<>();
        CoordinatorVerticle verticle = new CoordinatorVerticle();
        // checked before the workers too: a second cache's workers would answer at the first one's addresses
        return CoordinatorVerticle.addressIsFree(vertx, checked)
                .compose(free -> checked.isLocalWorkers() ? deployWorkers(vertx, checked, workers) : Future.<Void>succeededFuture())
                .compose(v -> vertx.deployVerticle(verticle, CoordinatorVerticle.deploymentOptions(checked)))
                .<KvCache>map(id -> new LocalKvCache(vertx, verticle, id, workers))
                .recover(e -> undeployAll(vertx, checked.getInstance(), workers).transform(undeployed -> Future.failedFuture(e)));
    }

    /** One worker per rank of the pool, all deployed before the coordinator starts; all or none. */
    private static Future<Void> deployWorkers(Vertx vertx, KvCacheOptions options, Map<String, String> deployed) {
        List<Future<String>> deploying = new ArrayList<>();
        List<RankTarget> ranks = PoolRanks.of(options).ranks();
        for (RankTarget rank : ranks) {
            RankWorkerOptions worker = new RankWorkerOptions().setInstance(options.getInstance()).setPp(rank.pp())
                    .setTp(rank.tp()).setDevice(options.getDevice()).setGpu(options.gpuOf(rank.pp(), rank.tp()))
                    .setSim(options.getSim()).setSendTimeoutMs(options.getSendTimeoutMs());
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
        return new KvCacheOptions(coordinator.options());
    }

    @Override
    public Future<Allocation> alloc(int blocks) {
        return onContext(() -> coordinator.alloc(blocks));
    }

    @Override
    public Future<Void> free(int[] blockIds) {
        int[] copy = blockIds == null ? null : blockIds.clone();
        return onContext(() -> coordinator.free(copy));
    }

    @Override
    public long fence() {
        long id = coordinator.nextFenceId();
        if (Thread.currentThread() == thread) {
            coordinator.openFence(id);
        } else {
            // queued before anything this thread asks next, so its frees fall under the fence
            context.runOnContext(v -> coordinator.openFence(id));
        }
        return id;
    }

    @Override
    public Future<Void> retired(long fence) {
        return onContext(() -> coordinator.retired(fence));
    }

    @Override
    public Future<Integer> availableBlocks() {
        return onContext(coordinator::availableBlocks);
    }

    @Override
    public Future<LimitResult> setMemoryLimit(long bytes, long revision) {
        return onContext(() -> coordinator.setMemoryLimit(bytes, revision));
    }

    @Override
    public Future<LimitResult> setMemoryLimit(long bytes) {
        return onContext(() -> coordinator.setMemoryLimit(bytes));
    }

    @Override
    public Future<CacheStats> stats() {
        return onContext(coordinator::stats);
    }

    @Override
    public Future<Void> trim() {
        return onContext(coordinator::trim);
    }

    /**
     * Undeploys the coordinator (which destroys the tensors on the ranks), then the local workers;
     * what was undeployed from outside already is skipped. Every call answers the first one's future.
     */
    @Override
    public synchronized Future<Void> close() {
        if (closing == null) {
            String instance = coordinator.pool().instance();
            closing = undeployIfThere(vertx, deployment).transform(coordinatorGone -> undeployAll(vertx, instance, workerDeployments)
                    .transform(workersGone -> coordinatorGone.failed() ? Future.<Void>failedFuture(coordinatorGone.cause())
                            : workersGone.failed() ? Future.<Void>failedFuture(workersGone.cause()) : Future.<Void>succeededFuture()));
        }
        return closing;
    }

    /** The coordinator verticle, for {@link CoordinatorView}. */
    CoordinatorVerticle verticle() {
        return verticle;
    }

    @Override
    public String toString() {
        return "KvCache[" + coordinator.pool().instance() + " group " + coordinator.pool().group() + " stages "
                + coordinator.pool().stages() + " tp " + coordinator.pool().tp() + "]";
    }

    private <T> Future<T> onContext(Supplier<Future<T>> work) {
        Context caller = Vertx.currentContext();
        if (Thread.currentThread() == thread) {
            Future<T> result = run(work);
            return result.isComplete() || caller == null || caller == context ? result : answerOn(caller, result);
        }
        Promise<T> promise = Promise.promise();
        context.runOnContext(v -> run(work).onComplete(ar -> {
            if (caller == null) {
                complete(promise, ar);
            } else {
                caller.runOnContext(x -> complete(promise, ar));
            }
        }));
        return promise.future();
    }

    private static <T> Future<T> answerOn(Context caller, Future<T> result) {
        Promise<T> promise = Promise.promise();
        result.onComplete(ar -> caller.runOnContext(x -> complete(promise, ar)));
        return promise.future();
    }

    private static <T> Future<T> run(Supplier<Future<T>> work) {
        try {
            return work.get();
        } catch (RuntimeException e) {
            return Future.failedFuture(e);
        }
    }

    private static <T> void complete(Promise<T> promise, AsyncResult<T> ar) {
        if (ar.succeeded()) {
            promise.complete(ar.result());
        } else {
            promise.fail(ar.cause());
        }
    }
}
