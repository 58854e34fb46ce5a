package io.kvpager.impl.coordinator;

import io.kvpager.protocol.CoordinatorRequest;
import io.kvpager.protocol.DestroyTensorsRequest;
import io.kvpager.device.HandlePoolOptions;
import io.kvpager.protocol.CreateTensorsRequest;
import io.kvpager.internal.CoordinatorView;
import io.kvpager.protocol.PoolRanks;
import io.kvpager.protocol.RankTarget;
import io.kvpager.protocol.HandlePoolJson;
import io.kvpager.protocol.RequestBody;
import io.kvpager.protocol.GroupStats;
import io.kvpager.protocol.StatsReply;
import io.kvpager.protocol.StatsRequest;
import io.kvpager.protocol.TensorsCreatedReply;
import io.kvpager.protocol.TensorsCreatedRequest;
import io.kvpager.Allocation;
import io.kvpager.cache.CacheState;
import io.kvpager.FailureCode;
import io.kvpager.LimitResult;
import io.kvpager.MissReason;
import io.kvpager.cache.CacheStats;
import io.kvpager.cache.GpuStats;
import io.kvpager.cache.Reclaim;
import io.kvpager.cache.KvCacheOptions;
import io.kvpager.cache.KvPagerException;
import io.kvpager.cache.PoolStats;
import io.kvpager.cache.RankStats;
import io.kvpager.cache.RankViews;
import io.kvpager.core.LedgerStats;
import io.kvpager.core.PageLedger;
import io.kvpager.core.PageMapFailure;
import io.kvpager.core.PageState;
import io.kvpager.core.ReserveMarks;
import io.kvpager.impl.broker.Guarantee;
import io.kvpager.impl.broker.PoolBudget;
import io.kvpager.internal.membership.ClusterMembership;
import io.kvpager.internal.membership.RankNodes;
import io.kvpager.protocol.Owner;
import io.kvpager.protocol.WireText;
import io.kvpager.internal.membership.RankNodes;
import io.kvpager.internal.membership.ClusterMembership;
import io.kvpager.protocol.WorkerAction;
import io.vertx.core.Context;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.Vertx;
import io.vertx.core.internal.VertxInternal;
import io.vertx.core.json.JsonObject;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.EnumMap;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletionStage;
import java.util.function.Supplier;

/**
 * The insides of one cache: its {@link PageLedger}, the fan-out that maps its pages on every rank,
 * the start that creates the tensors, the background refill, and the sweep that recovers
 * quarantined pages ({@link QuarantineSweep}). Everything here runs on the
 * coordinator verticle's context, one call at a time, because the ledger is single-threaded; the
 * mapper's stages complete on that context too, since the event-bus replies arrive there.
 *
 * <p>A failed start is kept (the {@code ready} future): every later {@code alloc} fails with its cause.
 *
 * <p>The ranks may run in this process or in others of the cluster; the coordinator sends to
 * their addresses either way. When the cluster removes a rank's node, its {@link RankNodes} fails
 * the requests in flight there and the rank counts as lost: every allocation then first tries to
 * bring it back ({@link RankRejoin}) and misses with {@link MissReason#RANK_DOWN} while it cannot,
 * even one the reserve could serve, since a page's blocks are only usable while every rank holds
 * it. The pages' memory is drawn from the budgets of the ranks' GPUs ({@link PoolBudget}), which
 * every cache on those GPUs shares.
 *
 * <p>A coordinator whose node the cluster counted gone while it ran (a pause, a partition) is
 * {@link #displace displaced}: the ranks gave its pages back, so it serves nothing from its ledger
 * any more, and every call that would answers {@link FailureCode#DISPLACED}. The verticle then
 * replaces it with a new incarnation ({@link CoordinatorVerticle}) and {@link #abandon abandons} it.
 * In a cluster it hands out blocks (and views) only while it knows every rank still keeps the group
 * for it ({@link OwnerLease}, from the ranks' own answers), so that resumed after a pause it never
 * answers from replies that waited in its sockets while the workers released its pages.
 */
public final class Coordinator {

    private static final Logger log = LoggerFactory.getLogger(Coordinator.class);
    /** Failed refill rounds in a row after which the cache reports itself degraded. */
    static final int REFILL_FAILURES_DEGRADED = 3;
    /** While a rank is lost, how often the coordinator tries to bring it back without waiting for an allocation. */
    static final long REJOIN_PROBE_MS = 1_000;
    /**
     * In a cluster, how long a request waits for its rank's answer before the rank's liveness is
     * probed, and how long the probe waits: a paused or cut-off rank is named within their sum
     * (2 s) rather than the send timeout or the cluster's removal of its node (10 s). A probe is
     * answered off the rank's thread, so a long map is never taken for a pause; 1 s leaves a
     * loaded host's scheduling stalls (hundreds of ms) well inside it.
     */
    static final long SILENT_RANK_PROBE_AFTER_MS = 1_000;
    static final long SILENT_RANK_PROBE_TIMEOUT_MS = 1_000;
    /** How often the owner's lease is looked at, and renewed in the background when it is due. */
    static final long LEASE_RENEWAL_TICK_MS = 250;
    /** Owner checks in a row, at most, before an allocation whose lease cannot be confirmed misses. */
    static final int LEASE_CHECKS = 2;

    private final KvCacheOptions options;
    /** This incarnation: the owner of the pool's tensors on every rank and of its share of each GPU's budget. */
    private final Owner owner;
    private final PoolRanks pool;
    private final RankNodes nodes;
    private final RankFanOut fanOut;
    private final PoolBudget budget;
    private final RankRejoin rejoin;
    private final PageLedger ledger;
    private final TensorStart tensorStart;
    /** The id of the last cache fence opened; 0 before the first. */
    private long lastFenceId;
    private final Map<Long, Long> ledgerFences = new HashMap<>();
    private final ReserveRefill refill;
    private final QuarantineSweep sweep;
    private final PeriodicTimer rejoinProbe;
    /** In a cluster: renews the owner's lease while the cache is idle; {@code null} outside one, where no lease ends. */
    private final PeriodicTimer leaseRenewal;
    /** The owner check in flight, shared by every allocation that waits for it; {@code null} when none is. */
    private Future<Void> leaseCheck;
    private final IdleHandles idle;
    private final ReclaimSignal reclaims;
    private final InstanceLimits limits;
    /** Allocations missed before the ledger because a rank was down. */
    private final Map<MissReason, Long> downMisses = new EnumMap<>(MissReason.class);
    private Future<Void> ready;
    private Future<Void> closing;
    /** Why this incarnation was displaced; {@code null} while it serves. */
    private String displaced;
    private Runnable displacedByRank = () -> { };
    /** The last limit change that applied or waits to, carried to the next incarnation and the cluster's records. */
    private LimitResult lastLimit;

    /**
     * @param context the coordinator verticle's context, where every method must be called
     * @param options validated options
     */
    public Coordinator(Vertx vertx, Context context, KvCacheOptions options) {
        this.options = options;
        this.rejoinProbe = new PeriodicTimer(vertx);
        ClusterMembership membership = ClusterMembership.of(vertx);
        this.owner = Owner.next(membership == null ? null : membership.nodeId());
        this.pool = PoolRanks.of(options);
        this.reclaims = new ReclaimSignal(vertx, pool.instance(), ((VertxInternal) vertx).createWorkerContext());
        this.nodes = RankNodes.of(vertx, context, pool, this::departed);
        this.fanOut = new RankFanOut(vertx.eventBus(), pool, nodes, options.getSendTimeoutMs(), owner);
        if (membership != null) {
            fanOut.probeSilentRanks(vertx, SILENT_RANK_PROBE_AFTER_MS, SILENT_RANK_PROBE_TIMEOUT_MS);
        }
        this.leaseRenewal = membership == null ? null : new PeriodicTimer(vertx);
        fanOut.onOwnerConflict(why -> {
            if (displaced == null && closing == null) {
                displace(why);
                displacedByRank.run();
            }
        });
        CreateTensorsRequest tensors = new CreateTensorsRequest(pool.group(), owner, options.geometry(), options.isZeroPage(),
                options.getHandlePool());
        this.rejoin = new RankRejoin(vertx, fanOut, tensors, options.getTensorsDeadlineMs(), options.getTensorsPollMs(),
                this::mappedPages);
        String name = "cache " + pool.instance() + " group " + pool.group();
        this.budget = new PoolBudget(vertx, name, pool.instance() + ".group" + pool.group(), owner,
                options.geometry().bytesPerPageId(), Guarantee.of(options), options.getReclaimDeadlineMs());
        this.idle = new IdleHandles(vertx, fanOut, budget, Math.min(options.getIdleHandlePages(), idlePagesAllowed(options)),
                options.getIdleHandleMs(), name);
        budget.beforeYield(idle::yieldAll);
        budget.giveBack(new PoolBudget.GiveBack() {
            @Override
            public Future<Void> cheap() {
                return (closing != null ? Future.<Void>succeededFuture() : trim()).transform(trimmed -> idle.yieldAll());
            }

            @Override
            public long askEngine(long pages, long deadlineMs, String reason) {
                int blocks = (int) Math.min(Integer.MAX_VALUE, pages * options.geometry().blocksPerPage());
                reclaims.raise(new Reclaim(blocks, deadlineMs, reason));
                return blocks;
            }
        });
        this.ledger = new PageLedger(options.geometry(), new FanOutMapper(fanOut, rejoin, budget, idle),
                new ReserveMarks(options.getReserveLow(), options.getReserveHigh(), options.isAdaptiveReserve()));
        if (options.getMemoryLimitBytes() != null) {
            // the configured limit is revision 0; run-time changes use revisions from 1
            ledger.setLimit(options.getMemoryLimitBytes(), 0);
        }
        this.tensorStart = new TensorStart(vertx, fanOut, pool.ranks(), tensors, options.getTensorsDeadlineMs(),
                options.getTensorsPollMs(), true);
        this.refill = new ReserveRefill(vertx, context, ledger, options.getRefillIntervalMs(), name,
                Coordinator::asKvPagerException);
        this.limits = new InstanceLimits(vertx, pool.instance(), pool.group());
        this.sweep = new QuarantineSweep(vertx, ledger, fanOut, budget, options.getRefillIntervalMs(), name);
    }

    /** The most idle page ids a rank lets the coordinator keep: the pages its handle-pool bound leaves. */
    private static int idlePagesAllowed(KvCacheOptions options) {
        HandlePoolOptions asked = options.getHandlePool();
        HandlePoolOptions pool = asked == null ? HandlePoolOptions.defaults(options.geometry()) : asked;
        return options.geometry().pages() - pool.boundPages();
    }

    public KvCacheOptions options() {
        return options;
    }

    public PoolRanks pool() {
        return pool;
    }

    /** Where the engine is told to give memory back. */
    ReclaimSignal reclaims() {
        return reclaims;
    }

    /** The coordinator incarnation that owns the pool's tensors on every rank and its GPU shares. */
    public Owner owner() {
        return owner;
    }

    /** Creates the tensors on every rank, opens the GPUs' budgets, and starts the refill and the sweep. */
    public Future<Void> start() {
        if (ready != null) {
            return ready;
        }
        ready = tensorStart.run().compose(created -> closing != null ? Future.succeededFuture() : budget.open(tensorStart.created()))
                .compose(opened -> applyLastLimit());
        ready.onSuccess(v -> {
            if (closing == null) {
                refill.start();
                sweep.start();
                idle.start();
                rejoinProbe.start(REJOIN_PROBE_MS, this::probeRejoin);
                if (leaseRenewal != null) {
                    leaseRenewal.start(LEASE_RENEWAL_TICK_MS, this::renewLease);
                }
            }
        }).onFailure(e -> log.error("cache {} group {} failed to start: {}", pool.instance(), pool.group(), e.getMessage()));
        return ready;
    }


    /**
     * In a cluster, the last limit set at run time on this cache, kept with the instance, applies
     * to this coordinator too when its revision is above the one in force (the options' limit is
     * revision 0). The records failing to answer leaves the limit as it is, with a warning.
     */
    private Future<Void> applyLastLimit() {
        if (!limits.kept() || closing != null) {
            return Future.succeededFuture();
        }
        return limits.last().transform(read -> {
            if (read.failed()) {
                log.warn("cache {} group {}: the last limit kept with the instance could not be read: {}", pool.instance(),
                        pool.group(), read.cause().getMessage());
            } else if (read.result() != null && read.result().revision() > ledger.stats().limitRevision()) {
                LimitResult last = read.result();
                LimitResult applied = ledger.setLimit(last.limitBytes(), last.revision());
                lastLimit = applied;
                log.info("cache {} group {}: applies the last limit set on the instance, {} bytes per rank (revision {}): {}",
                        pool.instance(), pool.group(), last.limitBytes(), last.revision(), applied.outcome());
            }
            return Future.succeededFuture();
        });
    }

    public Future<Allocation> alloc(int blocks) {
        return alloc(blocks, CoordinatorRequest.Alloc.ANYWHERE);
    }

    /**
     * {@code blocks} blocks, first in the page of block {@code near} (a block this cache handed out
     * and still holds), or best fit for {@link CoordinatorRequest.Alloc#ANYWHERE}; see
     * {@code PageLedger.alloc(int, int)}.
     */
    public Future<Allocation> alloc(int blocks, int near) {
        if (displaced != null) {
            return Future.failedFuture(displacedFailure());
        }
        if (closing != null) {
            return Future.failedFuture(closed());
        }
        if (!ready.isComplete()) {
            return ready.compose(v -> alloc(blocks, near));
        }
        if (ready.failed()) {
            return Future.failedFuture(ready.cause());
        }
        int total = options.getPages() * options.geometry().blocksPerPage();
        if (blocks > 0 && blocks <= total && !rejoin.allBack()) {
            // an allocation waits here for the rejoin, whether or not it maps; the mapper's own check, there for the
            // refill, free and trim, then finds every rank back
            return rejoin.rejoin().transform(back -> back.succeeded() ? allocNow(blocks, near) : Future.succeededFuture(downMiss(back.cause())));
        }
        return allocNow(blocks, near);
    }

    private Future<Allocation> allocNow(int blocks, int near) {
        CompletionStage<Allocation> stage;
        PoolBudget.AllocWait wait = new PoolBudget.AllocWait();
        try {
            stage = budget.forAlloc(wait, () -> near == CoordinatorRequest.Alloc.ANYWHERE ? ledger.alloc(blocks) : ledger.alloc(blocks, near));
        } catch (RuntimeException e) {
            return Future.failedFuture(e);
        }
        refill.allocated();
        return Future.fromCompletionStage(stage).compose(a -> a.isMiss() ? Future.succeededFuture(a) : fenced(a)).map(a -> {
            Allocation answered = wait.waitNanos() > 0 ? a.withReclaimWait(wait.waitNanos()) : a;
            return answered.isMiss() ? answered : answered.withIncarnation(owner.toString());
        });
    }

    /**
     * {@code allocated}, once this owner knows every rank still keeps the group for it
     * ({@link OwnerLease}): at once while the ranks' last answers prove it, else after an owner
     * check. An allocation answered after a pause past the workers' lease grace would hand out
     * blocks on pages the workers may have released: so, if the check finds the group gone on a
     * rank or cannot confirm it, the blocks go back to the ledger and the allocation misses
     * (naming the ranks), or fails {@code DISPLACED} once this owner knows it was displaced.
     */
    private Future<Allocation> fenced(Allocation allocated) {
        if (leaseRenewal == null || fanOut.lease().current()) {
            return Future.succeededFuture(allocated);
        }
        return confirmLease(LEASE_CHECKS).transform(checked -> {
            if (displaced != null) {
                return Future.failedFuture(displacedFailure());
            }
            if (closing != null) {
                return Future.failedFuture(closed());
            }
            if (checked.succeeded()) {
                return Future.succeededFuture(allocated);
            }
            ledger.free(allocated.blocks());
            Throwable cause = checked.cause();
            MissReason reason = cause instanceof KvPagerException k && !k.failures().isEmpty()
                    ? FanOutMapper.reasonOf(k.failures()) : MissReason.RANK_DOWN;
            downMisses.merge(reason, 1L, Long::sum);
            log.warn("cache {} group {}: an allocation of {} blocks not answered, owner {} could not confirm its lease: {}",
                    pool.instance(), pool.group(), allocated.size(), owner, cause.getMessage());
            return Future.succeededFuture(Allocation.miss(reason, "alloc not served: owner " + owner + " of group "
                    + pool.group() + " could not confirm that every rank still holds its pages: " + cause.getMessage()));
        });
    }

    /**
     * Asks every rank whether the group is still this owner's (tensors-created with the owner),
     * which renews the lease where it is; up to {@code tries} times while the answers come back
     * too late to make it current (the process paused again meanwhile). Fails with the ranks'
     * failures, or with one naming the ranks that no longer hold the group for this owner (they
     * released it, or a newer owner claimed it: the membership's merge or their 409 displaces
     * this one). A lease too short to fence ({@link OwnerLease#fences}) is taken as confirmed by a
     * check that every rank answered yes.
     */
    private Future<Void> confirmLease(int tries) {
        if (leaseCheck == null) {
            TensorsCreatedRequest check = new TensorsCreatedRequest(pool.group(), owner);
            leaseCheck = fanOut.toAll(check).compose(replies -> {
                List<RankReply> checked = new ArrayList<>(replies.size());
                int gone = 0;
                for (RankReply reply : replies) {
                    if (reply.succeeded() && !Boolean.TRUE.equals(reply.body().getValue(TensorsCreatedReply.CREATED))) {
                        gone++;
                        reply = RankReply.failed(reply.rank(), FailureCode.NO_TENSORS, reply.rank().name() + " no longer holds group "
                                + pool.group() + " for owner " + owner);
                    }
                    checked.add(reply);
                }
                if (gone == replies.size() && displaced == null && closing == null) {
                    // every rank gave the group up: its lease ended there while this owner was paused or cut off
                    displace("every rank released the group: its lease ended there while this owner was paused or cut off");
                    displacedByRank.run();
                }
                rejoin.noteLost(checked);
                List<io.kvpager.cache.RankFailure> failures = RankFanOut.failures(checked);
                if (!failures.isEmpty()) {
                    return Future.failedFuture(KvPagerException.ofRanks("owner check of group " + pool.group(), replies.size(), failures));
                }
                return Future.<Void>succeededFuture();
            }).andThen(done -> leaseCheck = null);
        }
        return leaseCheck.compose(confirmed -> {
            OwnerLease lease = fanOut.lease();
            if (lease.current() || !lease.fences()) {
                return Future.succeededFuture();
            }
            if (tries > 1) {
                return confirmLease(tries - 1);
            }
            return Future.failedFuture(new KvPagerException(FailureCode.TIMEOUT, "owner check of group " + pool.group()
                    + ": every rank answered, but too late for the lease they state (" + lease.statedMs() + " ms)"));
        });
    }

    /** While the cache serves, renews the owner's lease before it ends, so that allocations find it current. */
    private void renewLease() {
        if (displaced == null && closing == null && leaseCheck == null && rejoin.allBack() && fanOut.lease().dueForRenewal()) {
            confirmLease(1).onFailure(e -> log.debug("cache {} group {}: renewing owner {}'s lease failed: {}", pool.instance(),
                    pool.group(), owner, e.getMessage()));
        }
    }

    /** An allocation that a lost rank, which could not come back, keeps from being served. */
    private Allocation downMiss(Throwable cause) {
        MissReason reason = cause instanceof KvPagerException k && !k.failures().isEmpty()
                ? FanOutMapper.reasonOf(k.failures()) : MissReason.RANK_DOWN;
        downMisses.merge(reason, 1L, Long::sum);
        return Allocation.miss(reason, "alloc not served while " + rejoin.lost() + " of group " + pool.group()
                + " cannot come back: " + cause.getMessage());
    }

    /**
     * Brings lost ranks back while the cache is idle, so that a worker restarted after its rank
     * was lost holds the pool's pages again without waiting for the next allocation (which would
     * bring it back too); a rank with no worker yet fails at once and is tried again next period.
     */
    private void probeRejoin() {
        if (closing == null && !rejoin.allBack()) {
            rejoin.rejoin().onFailure(e -> log.debug("cache {} group {}: {} not back yet: {}", pool.instance(), pool.group(),
                    rejoin.lost(), e.getMessage()));
        }
    }

    /** The cluster removed the node of these ranks: they lost their tensors, and must rejoin before the next allocation. */
    private void departed(List<RankTarget> ranks) {
        rejoin.noteDeparted(ranks);
        if (nodes.nodeStopping()) {
            log.info("cache {} group {}: {} left the cluster while this node stops too", pool.instance(), pool.group(), ranks);
            return;
        }
        log.warn("cache {} group {}: {} left the cluster; allocations miss until a worker for {} rejoins",
                pool.instance(), pool.group(), ranks, ranks.size() == 1 ? "it" : "each");
    }

    /**
     * Frees the blocks; pages they empty that neither stay in the reserve nor wait for a fence are
     * unmapped in the same call, in one fan-out, and the future completes once they are. If that
     * unmap fails the blocks are free all the same and the pages stay mapped and idle until the
     * refill's next release; while a rank is lost or the release backs off after failures, the
     * pages are left to it at once.
     */
    public Future<Void> free(int[] blocks) {
        return free(blocks, null);
    }

    /**
     * {@link #free(int[])} of blocks handed out by coordinator incarnation {@code handedBy}
     * ({@link Allocation#incarnation()}), or by this one when {@code null}. Block ids are positions
     * in the tensors, and a new incarnation hands the ids of the one before out again: a free that
     * names another incarnation fails with {@link FailureCode#DISPLACED} and frees nothing, so that
     * it never frees a block this incarnation gave to someone else.
     */
    public Future<Void> free(int[] blocks, String handedBy) {
        if (displaced != null) {
            return Future.failedFuture(displacedFailure());
        }
        if (closing != null) {
            return Future.failedFuture(closed());
        }
        if (handedBy != null && !handedBy.equals(owner.toString())) {
            return Future.failedFuture(new KvPagerException(FailureCode.DISPLACED, "cache " + pool.instance() + " group "
                    + pool.group() + ": the blocks were handed out by owner " + WireText.cut(handedBy)
                    + ", not by owner " + owner + " that serves now; an owner before was displaced and every block it"
                    + " allocated is gone: nothing freed"));
        }
        int releasable;
        try {
            releasable = ledger.free(blocks);
        } catch (RuntimeException e) {
            return Future.failedFuture(e);
        }
        if (budget.givingBack() && rejoin.allBack()) {
            // the pool is giving memory back to a pool below its guarantee: pages left empty go now, the reserve's too
            return trim().recover(e -> {
                log.debug("cache {} group {}: giving back the pages emptied by a free failed: {}", pool.instance(), pool.group(),
                        e.getMessage());
                return Future.succeededFuture();
            });
        }
        if (releasable == 0 || !rejoin.allBack() || refill.backingOff()) {
            return Future.succeededFuture();
        }
        return unwrap(ledger.releaseReclaimed()).transform(released -> {
            if (released.failed()) {
                log.debug("cache {} group {}: unmapping pages emptied by a free failed; the refill retries: {}",
                        pool.instance(), pool.group(), released.cause().getMessage());
                // the refill's own release then fails too and backs off, and later frees leave their pages to it
                refill.wake();
            }
            return Future.succeededFuture();
        });
    }

    /** Opens a cache fence and the ledger fence behind it: its id, one above the last one opened. */
    public long fence() {
        long id = ++lastFenceId;
        ledgerFences.put(id, ledger.fence());
        return id;
    }

    /**
     * Retires fence {@code id} and completes once the pages it held back have been unmapped (after
     * any background unmap in flight, so none of them is still on its way out).
     */
    public Future<Void> retired(long id) {
        if (displaced != null) {
            return Future.failedFuture(displacedFailure());
        }
        if (closing != null) {
            return Future.failedFuture(closed());
        }
        Long ledgerFence = ledgerFences.get(id);
        if (ledgerFence == null) {
            return Future.failedFuture(new IllegalArgumentException(id <= 0 || id > lastFenceId
                    ? "fence " + id + " was never opened; the last one opened is " + lastFenceId
                    : "fence " + id + " is already retired"));
        }
        try {
            ledger.retire(ledgerFence);
        } catch (RuntimeException e) {
            return Future.failedFuture(e);
        }
        ledgerFences.remove(id);
        return refill.after(() -> unwrap(ledger.releaseReclaimed()))
                .recover(e -> Future.failedFuture(asKvPagerException(e).withNote("fence " + id
                        + " is retired, but unmapping the pages it held back failed; they stay mapped and idle")))
                .mapEmpty();
    }

    public Future<Integer> availableBlocks() {
        return Future.succeededFuture(ledger.availableBlocks());
    }

    public Future<LimitResult> setMemoryLimit(long bytes, long revision) {
        return changeLimit(() -> ledger.setLimit(bytes, revision));
    }

    /** A limit change under the next revision, the one in force plus one: see {@link PageLedger#setNextLimit}. */
    public Future<LimitResult> setMemoryLimit(long bytes) {
        return changeLimit(() -> ledger.setNextLimit(bytes));
    }

    private Future<LimitResult> changeLimit(Supplier<LimitResult> change) {
        if (displaced != null) {
            return Future.failedFuture(displacedFailure());
        }
        if (closing != null) {
            return Future.failedFuture(closed());
        }
        try {
            LimitResult result = change.get();
            if (result.outcome() == LimitResult.Outcome.APPLIED || result.outcome() == LimitResult.Outcome.DEFERRED) {
                lastLimit = result;
                if (limits.kept()) {
                    // kept with the instance before the answer, so that a restart right after applies it
                    refill.wake();
                    return limits.record(result).transform(kept -> {
                        if (kept.failed()) {
                            log.warn("cache {} group {}: limit revision {} applies here but was not kept with the instance: {}",
                                    pool.instance(), pool.group(), result.revision(), kept.cause().getMessage());
                        }
                        return Future.succeededFuture(result);
                    });
                }
            }
            refill.wake();
            return Future.succeededFuture(result);
        } catch (RuntimeException e) {
            return Future.failedFuture(e);
        }
    }

    /**
     * Unmaps the idle reserve and the reclaimed pages no open fence holds, after any background
     * work in flight. The refill then rests until the next allocation, or it would map the
     * reserve straight back.
     */
    public Future<Void> trim() {
        if (displaced != null) {
            return Future.failedFuture(displacedFailure());
        }
        if (closing != null) {
            return Future.failedFuture(closed());
        }
        refill.hold();
        return refill.after(() -> unwrap(ledger.trim())).mapEmpty();
    }

    /**
     * Each rank's views of the pool's tensors, rank by rank; see {@link PoolViews}. In a cluster,
     * once this owner knows every rank still keeps the group for it, as for an allocation.
     */
    public Future<List<RankViews>> views() {
        if (displaced != null) {
            return Future.failedFuture(displacedFailure());
        }
        if (closing != null) {
            return Future.failedFuture(closed());
        }
        Future<Void> owned = leaseRenewal == null || fanOut.lease().current() ? Future.succeededFuture() : confirmLease(LEASE_CHECKS);
        return owned.compose(confirmed -> displaced != null ? Future.failedFuture(displacedFailure())
                : PoolViews.read(fanOut, options.geometry().blockBytes()));
    }

    public Future<CacheStats> stats() {
        return stats(0);
    }

    /**
     * The cache's stats, each rank's as it answers within {@code ranksWithinMs} (0: the send
     * timeout); a rank silent that long (a paused process) is down in them, named with the time it
     * was given, and the cache degraded. Given a bound, a GPU whose budget record is not read within
     * it (its map entry owned by a paused member) shows its taken bytes as unknown.
     */
    public Future<CacheStats> stats(long ranksWithinMs) {
        PoolStats poolStats = poolStats(ledger.stats(), options.geometry().bytesPerPageId(), downMisses);
        long within = ranksWithinMs <= 0 ? fanOut.sendTimeoutMs() : Math.min(ranksWithinMs, fanOut.sendTimeoutMs());
        Future<List<GpuStats>> gpus = budget.stats(ranksWithinMs <= 0 ? 0 : within);
        return fanOut.send(fanOut.pool().ranks(), new StatsRequest(), within).compose(replies -> gpus.map(gpuStats -> {
            List<RankStats> ranks = new ArrayList<>(replies.size());
            for (RankReply reply : replies) {
                ranks.add(rankStats(reply, pool.group()));
            }
            CacheState state = displaced != null ? CacheState.DEGRADED : closing != null ? CacheState.CLOSED : !ready.isComplete() ? CacheState.STARTING
                    : ready.failed() ? CacheState.FAILED : CacheState.READY;
            String reason = displaced != null ? "displaced: owner " + owner + " " + displaced : switch (state) {
                case CLOSED -> "the cache is closed";
                case STARTING -> "waiting for the tensors on every rank";
                case FAILED -> "the start failed: " + ready.cause().getMessage();
                default -> degradedBecause(ranks);
            };
            if (reason != null && state == CacheState.READY) {
                state = CacheState.DEGRADED;
            }
            return new CacheStats(pool.instance(), pool.group(), pool.stages(), pool.tp(), state, reason,
                    ready.failed() ? ready.cause().getMessage() : null, refill.failure(), poolStats, ranks, gpuStats);
        }));
    }

    /**
     * Why a started cache cannot serve as it should, or {@code null}: a rank did not answer the
     * stats or is lost (allocations miss with {@code RANK_DOWN} until it is back), or the
     * background refill or release failed {@link #REFILL_FAILURES_DEGRADED} rounds in a row.
     */
    private String degradedBecause(List<RankStats> ranks) {
        List<String> down = new ArrayList<>();
        for (RankStats r : ranks) {
            if (!r.up()) {
                down.add(r.failure().toString());
            }
        }
        for (RankTarget lost : rejoin.lost()) {
            if (down.stream().noneMatch(d -> d.startsWith(lost.name() + " "))) {
                down.add(lost.name() + " lost its tensors and has not rejoined yet");
            }
        }
        if (!down.isEmpty()) {
            return (down.size() == 1 ? "a rank is down: " : down.size() + " ranks are down: ") + String.join("; ", down);
        }
        if (refill.failedRounds() >= REFILL_FAILURES_DEGRADED) {
            return "the background refill failed " + refill.failedRounds() + " rounds in a row; last: " + refill.failure();
        }
        return null;
    }

    /**
     * This incarnation was removed from the cluster while it ran, or a rank names a newer owner of
     * its group: the ranks gave its pages back (or will), so from now on it serves nothing from its
     * ledger. Stops the background work; allocations, frees, fences, limits and trims answer
     * {@link FailureCode#DISPLACED}; {@code stats} says why. Once only; nothing after a close.
     */
    public void displace(String why) {
        if (displaced != null || closing != null) {
            return;
        }
        displaced = why;
        refill.stop();
        sweep.stop();
        idle.stop();
        rejoinProbe.stop();
        if (leaseRenewal != null) {
            leaseRenewal.stop();
        }
        log.warn("cache {} group {}: owner {} was displaced ({}); it serves nothing from its ledger ({} blocks in use are gone)"
                + " and answers DISPLACED until a new incarnation serves", pool.instance(), pool.group(), owner, why,
                ledger.stats().usedBlocks());
    }

    /**
     * Asks every rank what it holds of the group now, for this displaced owner: whether a new
     * incarnation may claim it ({@link Comeback}). Never fails.
     */
    Future<Comeback> comeback() {
        return fanOut.toAll(new TensorsCreatedRequest(pool.group(), owner)).map(replies -> Comeback.judge(owner, replies));
    }

    /** Runs {@code then} after a rank's 409 displaced this incarnation: the rank is reachable, a new one can start. */
    public void onDisplacedByRank(Runnable then) {
        this.displacedByRank = then;
    }

    /** Why this incarnation was displaced, or {@code null} while it serves. */
    public String displacedBecause() {
        return displaced;
    }

    /** The last limit change that applied or waits to apply, or {@code null} when none was made at run time. */
    public LimitResult lastLimit() {
        return lastLimit;
    }

    /**
     * Gives a displaced incarnation up without touching the ranks: its successor's create-tensors
     * reclaims whatever they still hold of it. Gives back what is left of its GPU shares (a share
     * the successor claimed stays) and stops following the membership.
     */
    public Future<Void> abandon() {
        if (closing != null) {
            return closing;
        }
        Promise<Void> promise = beginClosing();
        budget.close().andThen(closed -> nodes.close()).onComplete(promise);
        return closing;
    }

    /** Marks this incarnation closing and stops its background work and its start; completing the promise ends the close. */
    private Promise<Void> beginClosing() {
        Promise<Void> promise = Promise.promise();
        closing = promise.future();
        refill.stop();
        sweep.stop();
        idle.stop();
        rejoinProbe.stop();
        if (leaseRenewal != null) {
            leaseRenewal.stop();
        }
        if (ready != null) {
            tensorStart.cancel();
        }
        return promise;
    }

    private KvPagerException displacedFailure() {
        return new KvPagerException(FailureCode.DISPLACED, "cache " + pool.instance() + " group " + pool.group() + ": owner " + owner
                + " was displaced (" + displaced + "); every block it allocated is gone");
    }

    /** The ledger, for {@link CoordinatorView}; call only on the context. */
    public PageLedger ledger() {
        return ledger;
    }

    /** The ranks lost now (no worker, no tensors, or their node left the cluster), for stats and tests. */
    public List<RankTarget> lostRanks() {
        return rejoin.lost();
    }

    /**
     * Stops the refill and the start, lets background work in flight finish, and destroys the
     * tensors on every rank (which unmaps every page). A rank without a worker, without tensors, or
     * stopping (which gives back everything itself) has nothing to destroy; any other failure fails
     * the close, after everything else is done.
     */
    public Future<Void> close() {
        if (displaced != null) {
            return abandon();
        }
        if (closing != null) {
            return closing;
        }
        Promise<Void> promise = beginClosing();
        DestroyTensorsRequest destroy = new DestroyTensorsRequest(pool.group(), owner);
        refill.after(() -> sweep.idle().transform(swept -> idle.idle()).transform(kept -> fanOut.toAll(destroy))).map(replies -> {
            List<io.kvpager.cache.RankFailure> failures = new ArrayList<>();
            for (RankReply reply : replies) {
                // CONFLICT: a new owner reclaimed the group there, and with it this pool's pages
                if (!reply.succeeded() && reply.code() != FailureCode.NO_RANK && reply.code() != FailureCode.NO_TENSORS
                        && reply.code() != FailureCode.STOPPING && reply.code() != FailureCode.CONFLICT) {
                    failures.add(reply.failure());
                }
            }
            if (!failures.isEmpty()) {
                log.warn("cache {} group {}: its GPU budget stays taken, as some ranks may still hold its memory",
                        pool.instance(), pool.group());
                throw KvPagerException.ofRanks("destroy-tensors of group " + pool.group(), replies.size(), failures);
            }
            return (Void) null;
        }).compose(destroyed -> budget.close())
                // the membership is followed to the end, so that a rank whose node leaves now fails at once
                .andThen(closed -> nodes.close()).onComplete(promise);
        return closing;
    }

    /**
     * What a rejoining rank must map: the pages mapped on every other rank. The rejoin reads this
     * once no fan-out is in flight, so a page being unmapped then is one whose unmap waits for the
     * rejoin and is still mapped everywhere else, and a page being mapped one whose map waits too.
     */
    private int[] mappedPages() {
        int[] pages = new int[options.getPages()];
        int n = 0;
        for (int page = 0; page < pages.length; page++) {
            PageState state = ledger.pageState(page);
            if (state == PageState.IN_USE || state == PageState.RESERVE || state == PageState.RECLAIMED
                    || state == PageState.UNMAPPING) {
                pages[n++] = page;
            }
        }
        return Arrays.copyOf(pages, n);
    }

    private KvPagerException closed() {
        return new KvPagerException(FailureCode.STOPPING, "cache " + pool.instance() + " group " + pool.group() + " is closed");
    }

    /** A ledger stage as a future; a mapper failure reaches the caller as its {@link KvPagerException}. */
    private static <T> Future<T> unwrap(CompletionStage<T> stage) {
        return Future.fromCompletionStage(stage).recover(e -> Future.failedFuture(asKvPagerException(e)));
    }

    private static KvPagerException asKvPagerException(Throwable e) {
        if (e instanceof KvPagerException k) {
            return k;
        }
        if (e instanceof PageMapFailure f && f.getCause() instanceof KvPagerException k) {
            return k;
        }
        return new KvPagerException(FailureCode.DRIVER_ERROR, String.valueOf(e.getMessage()), List.of(), e);
    }

    static PoolStats poolStats(LedgerStats s, long bytesPerPage, Map<MissReason, Long> moreMisses) {
        Map<MissReason, Long> misses = new EnumMap<>(MissReason.class);
        misses.putAll(s.misses());
        moreMisses.forEach((reason, n) -> misses.merge(reason, n, Long::sum));
        return new PoolStats(s.mappedPages(), s.inUsePages(), s.reservePages(), s.reclaimedPages(), s.quarantinedPages(),
                s.freePages(), s.usedBlocks(), s.limitPages(), s.lowMark(), s.highMark(), s.allocs(), misses,
                s.maps(), s.unmaps(), bytesPerPage);
    }

    /** A rank's stats, or the rank down: it failed, or answered something that is not a {@link StatsReply}. */
    private static RankStats rankStats(RankReply reply, int group) {
        if (!reply.succeeded()) {
            return RankStats.down(reply.failure());
        }
        StatsReply stats;
        try {
            stats = StatsReply.fromJson(reply.body());
        } catch (IllegalArgumentException e) {
            return RankStats.down(new io.kvpager.cache.RankFailure(reply.rank().name(), FailureCode.DRIVER_ERROR,
                    reply.rank().name() + " answered stats with " + reply.body().encode() + ": " + e.getMessage()));
        }
        GroupStats mine = stats.groups().get(group);
        return new RankStats(reply.rank().name(), true, null, stats.device(), mine == null ? 0 : mine.mappedPages(),
                mine == null ? 0 : mine.handles(), stats.handlesAlive(), stats.deviceUsedBytes(), stats.deviceFreeBytes(),
                stats.deviceTotalBytes());
    }

}
