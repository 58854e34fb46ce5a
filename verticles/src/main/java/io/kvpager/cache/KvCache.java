package io.kvpager.cache;

import io.kvpager.Allocation;
import io.kvpager.LimitResult;
import io.kvpager.impl.coordinator.LocalKvCache;
import io.vertx.codegen.annotations.Fluent;
import io.vertx.codegen.annotations.Nullable;
import io.vertx.codegen.annotations.VertxGen;
import io.vertx.core.Context;
import io.vertx.core.Future;
import io.vertx.core.Handler;
import io.vertx.core.Vertx;

import java.util.List;
import java.util.ServiceLoader;

/**
 * One pool of a model's KV cache, backed page by page with GPU memory on every rank that holds
 * it. Blocks are handed out by {@link #alloc} from partly used pages, then from a reserve of
 * pages already mapped on every rank; new pages are mapped (on all ranks, or on none) only when
 * both are empty. Every call is asynchronous; its future is bound to the caller's Vert.x context
 * (an event loop, a worker or a duplicated context: its callbacks run there), and for a caller
 * without one to the cache's callback context, a worker context: callbacks never run on the
 * coordinator's event loop.
 *
 * <p>A miss is not a failure: when a device is out of memory, a limit is reached or a map fails,
 * {@code alloc} succeeds with a miss ({@code Allocation.isMiss()}) and its reason, and the engine
 * preempts and retries. Bad arguments fail with {@link IllegalArgumentException}; a failure of
 * the ranks fails with a {@link KvPagerException} naming each rank.
 *
 * <p>The RxJava 3 API, {@code io.kvpager.rxjava3.cache.KvCache}, is generated from this interface by
 * Vert.x codegen: every type here is one codegen knows (Vert.x types, data objects, lists, boxed
 * numbers).
 */
@VertxGen
public interface KvCache {

    /**
     * Deploys a cache: the coordinator verticle, and the ranks' workers when
     * {@code KvCacheOptions.isLocalWorkers()} asks for them; creates the pool's tensors on every
     * rank and waits for them (unless {@code KvCacheOptions.isLazyStart()}). Fails with an
     * {@link IllegalArgumentException} for invalid options, or with the start's failure; nothing it
     * deployed is left behind then.
     */
    static Future<KvCache> deploy(Vertx vertx, KvCacheOptions options) {
        CacheDeployer deployer = ServiceLoader.load(CacheDeployer.class, KvCache.class.getClassLoader()).findFirst()
                .orElseThrow(() -> new IllegalStateException("no " + CacheDeployer.class.getName()
                        + " on the class path: a jar that merges kvpager-verticles must keep its META-INF/services"));
        return deployer.deploy(vertx, options);
    }

    /** The options this cache was deployed with. */
    KvCacheOptions options();

    /**
     * The coordinator's context: the event loop the ledger of this cache runs on. A call made on
     * its thread goes to the ledger directly, without the two thread hand-offs between a caller's
     * thread and the coordinator's (docs/performance.md measures them: tens of microseconds a call),
     * and its answer is handed back there. An engine whose scheduler runs on Vert.x can run its
     * step here, {@code cache.context().runOnContext(v -> step())}; code run here must never block,
     * as it holds up the ledger for every caller of this cache.
     */
    Context context();

    /** {@code blocks} block ids, or a miss with its reason. */
    Future<Allocation> alloc(int blocks);

    /**
     * {@code blocks} block ids placed near block {@code near}, or a miss with its reason: first the
     * free blocks of {@code near}'s page, then, for what they leave, a page of the reserve when one
     * holds it, else best fit as {@link #alloc(int)}. An engine that grows each sequence near its
     * own last block keeps the sequence in pages shared with few others, so that its end (or its
     * preemption) empties whole pages, which then go back (docs/sharing.md measures it). Fails
     * with an {@link IllegalArgumentException}, changing nothing, when {@code near} is not a block
     * this cache handed out and still holds.
     */
    Future<Allocation> alloc(int blocks, int near);

    /**
     * Gives blocks back; all or nothing. A page left empty returns to the reserve; when the reserve
     * is full (or the limit leaves it no room) and no batch fence is open, it is unmapped on every
     * rank before the future completes, in one fan-out; while fences are open it is unmapped once
     * every one of them has {@link #retired} (until then it may be reused). A failed unmap does not
     * fail the free: the page stays mapped and idle and the background release retries it.
     * A block id that is not allocated, or given twice, fails it with an
     * {@link IllegalArgumentException} and frees nothing.
     */
    Future<Void> free(List<Integer> blockIds);

    /**
     * Gives back every block of {@code allocation}, as {@link #free(List)} does (a miss holds none:
     * freeing it changes nothing).
     */
    Future<Void> free(Allocation allocation);

    /**
     * Opens a batch fence on the coordinator, in the order of this caller's other calls: pages
     * freed by a call made after this one stay mapped until the fence has {@link #retired}. Answers
     * with the fence's id once it is open.
     */
    Future<Long> fence();

    /**
     * The engine's batch behind {@code fence} has finished: completes once the physical releases
     * this allows have been carried out. Fails for a fence that is not open.
     */
    Future<Void> retired(long fence);

    /** Blocks that can be allocated now: free blocks of mapped pages plus pages the limit still allows. */
    Future<Integer> availableBlocks();

    /**
     * Changes the pool's memory limit per rank, under a revision number (see {@code LimitResult.Outcome}).
     * A revision is 0 to 2^62; another fails with an {@link IllegalArgumentException} and changes nothing.
     */
    Future<LimitResult> setMemoryLimit(long bytes, long revision);

    /**
     * Changes the pool's memory limit per rank under the next revision, the one in force plus one:
     * the change applies ({@code APPLIED} or {@code DEFERRED}) whatever revision an earlier one gave.
     */
    Future<LimitResult> setMemoryLimit(long bytes);

    /**
     * Where the pool's blocks are on every rank, for the engine's attention kernels: per rank, one
     * {@link BufferView} per (layer, buffer) with its address range and geometry. The ranges never
     * move while the cache is open: read them once after deploy. Fails with a
     * {@link KvPagerException} naming each rank that could not answer (a rank down, or one without
     * the pool's tensors), and with code {@code STOPPING} once the cache is closed.
     */
    Future<List<RankViews>> views();

    /** The pool's figures and each rank's, with the ranks' health. */
    Future<CacheStats> stats();

    /**
     * Sets the engine's handler of {@link Reclaim}s, or removes it ({@code null}): how the cache asks
     * its engine to give back memory that a cache below its guaranteed share of the GPU needs. The
     * handler runs on the context it was set from (or, set from a thread without one, on the cache's
     * callback context), one reclaim at a time; the engine answers by freeing blocks with
     * {@link #free}. Every reclaim is also published on the event bus at {@code Reclaim.address(instance)},
     * with or without a handler.
     *
     * @return this
     */
    @Fluent
    KvCache reclaimHandler(@Nullable Handler<Reclaim> handler);

    /** Unmaps the idle reserve (and reclaimed pages whose fences have retired). */
    Future<Void> trim();

    /** Stops the refill, destroys the tensors on every rank, and undeploys what {@link #deploy} deployed. */
    Future<Void> close();
}
