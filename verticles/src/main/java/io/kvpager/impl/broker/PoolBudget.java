package io.kvpager.impl.broker;

import io.kvpager.FailureCode;
import io.kvpager.MissReason;
import io.kvpager.cache.GpuStats;
import io.kvpager.cache.KvPagerException;
import io.kvpager.core.PageMapFailure;
import io.kvpager.protocol.RankTarget;
import io.kvpager.protocol.RankTarget;
import io.kvpager.protocol.Owner;
import io.kvpager.protocol.CreateTensorsReply;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.eventbus.MessageConsumer;
import io.vertx.core.json.JsonObject;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;

/**
 * What one pool holds of the budgets of the GPUs its ranks run on, as its owner's share of each
 * ({@link GpuLease}). Each rank's worker names its GPU when it creates the tensors; a page id costs
 * {@code bytesPerPageId} on every rank, so on a GPU that {@code r} of the pool's ranks share,
 * {@code n} pages cost {@code n × r × bytesPerPageId}. The memory a group may hold besides its pages
 * (the zero page, idle handles) is claimed when the pool opens, replacing any share a former owner
 * of the pool left, and held until it closes.
 *
 * <p>Most takes fit in the leases already held and cost no message. A take that does not extends
 * the leases; one that the GPU refuses first recalls the other pools' surplus there
 * ({@link SurplusRecall}) and tries once more. Refused again, an allocation's take that would keep
 * the pool within its guarantee ({@link ShareArbiter}) reclaims the shortfall from the pools above
 * theirs ({@link ShareReclaim}) and waits for it, up to the deadline they answer with; a pool that
 * has not given back by then is capped. Asked itself, the pool gives back what costs nothing at
 * once, asks its engine for the rest ({@link GiveBack}) and, until its deadline, grows no further
 * than its guarantee and returns every byte freed to the broker at once.
 *
 * <p>A rank whose worker does not name its GPU is not brokered. Runs on the coordinator's context.
 */
public final class PoolBudget {

    private static final Logger log = LoggerFactory.getLogger(PoolBudget.class);

    private final Vertx vertx;
    private final String name;
    private final String pool;
    private final Owner owner;
    private final long bytesPerPageId;
    private final Map<String, GpuLease> leases = new LinkedHashMap<>();
    private MessageConsumer<JsonObject> recalls;
    private MessageConsumer<JsonObject> reclaims;
    private Supplier<Future<Void>> beforeYield = Future::succeededFuture;
    private final Guarantee guarantee;
    private final long reclaimDeadlineMs;
    private GiveBack giveBack;
    /** The allocation whose take runs now, on this context: where a reclaim's wait is recorded. */
    private AllocWait current;

    /**
     * @param name the pool's name in messages
     * @param pool the pool's name in the GPUs' shares, the same for every owner of the pool
     * @param owner the coordinator incarnation that owns the pool's shares
     * @param bytesPerPageId physical bytes one page id costs on one rank
     */
    public PoolBudget(Vertx vertx, String name, String pool, Owner owner, long bytesPerPageId) {
        this(vertx, name, pool, owner, bytesPerPageId, Guarantee.SPLIT, io.kvpager.cache.KvCacheOptions.DEFAULT_RECLAIM_DEADLINE_MS);
    }

    /**
     * @param guarantee the guarantee the pool asks of each GPU
     * @param reclaimDeadlineMs how long the pool's engine has to give back what it is asked
     */
    public PoolBudget(Vertx vertx, String name, String pool, Owner owner, long bytesPerPageId, Guarantee guarantee,
                      long reclaimDeadlineMs) {
        this.vertx = vertx;
        this.name = name;
        this.pool = pool;
        this.owner = owner;
        this.bytesPerPageId = bytesPerPageId;
        this.guarantee = guarantee;
        this.reclaimDeadlineMs = reclaimDeadlineMs;
        this.giveBack = new GiveBack() {
            @Override
            public Future<Void> cheap() {
                return beforeYield.get();
            }

            @Override
            public long askEngine(long pages, long deadlineMs, String reason) {
                return 0;
            }
        };
    }

    /**
     * How the pool's cache gives memory back when a pool below its guarantee needs it: what costs
     * nothing first, then its engine.
     */
    public interface GiveBack {
        /** Gives up what the pool holds but does not use (its reserve, idle handles); completes when their budget is back. */
        Future<Void> cheap();

        /**
         * Asks the engine to free the blocks of {@code pages} pages within {@code deadlineMs}.
         *
         * @return the blocks asked, 0 when there is no engine to ask
         */
        long askEngine(long pages, long deadlineMs, String reason);
    }

    /** Sets how the pool gives memory back ({@link GiveBack}). */
    public void giveBack(GiveBack giveBack) {
        this.giveBack = giveBack;
    }

    /** One allocation's wait for reclaimed memory: how long, and what its miss should say. */
    public static final class AllocWait {
        private long waitNanos;
        private String note;

        /** From the first refusal to the answer, when the allocation waited for a reclaim; 0 otherwise. */
        public long waitNanos() {
            return waitNanos;
        }
    }

    /**
     * Runs {@code call}, an allocation, with its takes able to reclaim memory for it, recording their
     * wait in {@code wait}. Only the takes {@code call} makes before it returns count.
     */
    public <T> T forAlloc(AllocWait wait, Supplier<T> call) {
        AllocWait before = current;
        current = wait;
        try {
            return call.get();
        } finally {
            current = before;
        }
    }

    /** Whether the pool is giving memory back on some GPU now: what its engine frees should leave at once. */
    public boolean givingBack() {
        for (GpuLease lease : leases.values()) {
            if (lease.restrained()) {
                return true;
            }
        }
        return false;
    }

    /**
     * Opens the broker of each GPU the ranks named in their {@code create-tensors} answers and
     * claims the standing memory there, with the pool's guarantee. Fails with an
     * {@link FailureCode#OUT_OF_MEMORY} {@link KvPagerException} when a GPU has no room for it, and
     * with an {@link IllegalArgumentException} when the guarantees asked there would add up to more
     * than the GPU's capacity, after giving back what it took.
     */
    public Future<Void> open(Map<RankTarget, CreateTensorsReply> created) {
        Map<String, List<Map.Entry<RankTarget, CreateTensorsReply>>> byGpu = new LinkedHashMap<>();
        for (Map.Entry<RankTarget, CreateTensorsReply> e : created.entrySet()) {
            if (e.getValue() != null && e.getValue().gpu() != null && !e.getValue().gpu().isBlank()) {
                byGpu.computeIfAbsent(e.getValue().gpu(), g -> new ArrayList<>()).add(e);
            } else {
                log.debug("{}: {} does not name its GPU; its memory is not brokered", name, e.getKey().name());
            }
        }
        if (byGpu.isEmpty()) {
            return Future.succeededFuture();
        }
        recalls = SurplusRecall.answer(vertx, owner, pool, this::yieldOn);
        reclaims = ShareReclaim.answer(vertx, owner, pool, this::reclaimed, this::cappedOn);
        Future<Void> chain = recalls.completion().compose(v -> reclaims.completion());
        for (Map.Entry<String, List<Map.Entry<RankTarget, CreateTensorsReply>>> gpu : byGpu.entrySet()) {
            chain = chain.compose(v -> openLease(gpu.getKey(), gpu.getValue()));
        }
        // counted as running here before its first claim, so that no reconcile takes that claim for a gone owner's
        ShareReconcile.opened(vertx, this);
        return chain.recover(e -> close().transform(closed -> Future.failedFuture(e)));
    }

    private Future<Void> openLease(String gpu, List<Map.Entry<RankTarget, CreateTensorsReply>> ranks) {
        long capacity = Long.MAX_VALUE;
        long standing = 0;
        List<String> names = new ArrayList<>(ranks.size());
        for (Map.Entry<RankTarget, CreateTensorsReply> rank : ranks) {
            capacity = Math.min(capacity, rank.getValue().gpuBytes());
            standing += rank.getValue().standingBytes();
            names.add(rank.getKey().name());
        }
        long standingBytes = standing;
        return GpuBroker.open(vertx, gpu, capacity).compose(broker -> broker.claim(pool, owner, standingBytes, guarantee)
                .recover(e -> Future.failedFuture(e instanceof IllegalArgumentException ? new IllegalArgumentException(name + ": "
                        + e.getMessage(), e) : e))
                .compose(claimed -> {
            if (!claimed) {
                return Future.failedFuture(new KvPagerException(FailureCode.OUT_OF_MEMORY, name + ": gpu " + gpu
                        + " has no room for the " + standingBytes + " bytes its groups hold besides their pages: "
                        + broker.lastSeen().total() + " of " + broker.capacityBytes() + " bytes are taken by the caches on it"));
            }
            leases.put(gpu, new GpuLease(vertx, broker, pool, owner, names, standingBytes));
            return Future.succeededFuture();
        }));
    }

    /** The pool's lease on each brokered GPU, for tests. */
    List<GpuLease> leases() {
        return List.copyOf(leases.values());
    }

    /** The pool's name in the GPUs' shares. */
    String poolName() {
        return pool;
    }

    Owner owner() {
        return owner;
    }

    /** Whether any GPU is brokered. */
    public boolean brokered() {
        return !leases.isEmpty();
    }

    /**
     * Takes the budget of {@code pages} page ids on every GPU, all or none. A GPU without room
     * fails it with a {@link MissReason#GPU_SHARE} {@link PageMapFailure} (the pool's share of that
     * GPU is reached), and a broker that cannot be reached with {@link MissReason#MAP_FAILED}.
     */
    public Future<Void> take(int pages) {
        if (leases.isEmpty() || pages == 0) {
            return Future.succeededFuture();
        }
        boolean fitsEverywhere = true;
        for (GpuLease lease : leases.values()) {
            fitsEverywhere &= lease.fits(bytesOf(lease, pages));
        }
        if (fitsEverywhere) {
            for (GpuLease lease : leases.values()) {
                lease.takeHere(bytesOf(lease, pages));
            }
            return Future.succeededFuture();
        }
        // every GPU at once; a refusal anywhere gives back what the others granted
        AllocWait wait = current;
        List<GpuLease> all = List.copyOf(leases.values());
        List<Future<Boolean>> asked = new ArrayList<>(all.size());
        for (GpuLease lease : all) {
            asked.add(takeOrRecall(lease, bytesOf(lease, pages), wait));
        }
        return Future.join(asked).transform(joined -> {
            PageMapFailure failure = null;
            for (int i = 0; i < all.size(); i++) {
                GpuLease lease = all.get(i);
                Future<Boolean> answer = asked.get(i);
                if (failure == null && !(answer.succeeded() && answer.result())) {
                    failure = refusal(lease, pages, answer, wait);
                }
            }
            if (failure == null) {
                return Future.succeededFuture();
            }
            // nor does the pool keep a surplus leased for a map that cannot happen
            List<Future<Long>> given = new ArrayList<>(all.size());
            for (int i = 0; i < all.size(); i++) {
                if (asked.get(i).succeeded() && asked.get(i).result()) {
                    all.get(i).give(bytesOf(all.get(i), pages));
                    given.add(all.get(i).yieldSurplus());
                }
            }
            PageMapFailure refused = failure;
            return Future.join(given).transform(yielded -> Future.failedFuture(refused));
        });
    }

    /**
     * Takes {@code bytes} on {@code lease}'s GPU; refused, recalls the other pools' surplus there and
     * tries again; refused again, an allocation's take reclaims what its guarantee allows.
     */
    private Future<Boolean> takeOrRecall(GpuLease lease, long bytes, AllocWait wait) {
        return lease.take(bytes).compose(taken -> taken ? Future.succeededFuture(true)
                : SurplusRecall.ask(vertx, lease.broker().gpu(), lease.broker().lastSeen(), pool).compose(asked -> lease.take(bytes))
                .compose(again -> again || wait == null ? Future.succeededFuture(again) : reclaimFor(lease, bytes, wait)));
    }

    /** How often a take waiting for reclaimed memory tries again. */
    static final long RECLAIM_POLL_MS = 5;
    /** How long past a pool's deadline its memory may take to reach the broker before it is judged. */
    static final long RECLAIM_GRACE_MS = 50;

    /**
     * Reclaims the memory {@code bytes} need from the pools above their guarantees on the lease's GPU
     * ({@link ShareArbiter#plan}), or joins the reclaim already pending there, and waits for it: true
     * once taken, false when the guarantee does not cover it or the memory did not come back in
     * time, with why in {@code wait}.
     */
    private Future<Boolean> reclaimFor(GpuLease lease, long bytes, AllocWait wait) {
        GpuBroker broker = lease.broker();
        long refusedAt = System.nanoTime();
        if (lease.reclaimingUntil() - refusedAt > 0) {
            return waitFor(lease, bytes, wait, refusedAt, lease.reclaimingUntil(), "the reclaim already asked for this pool");
        }
        GpuShares seen = broker.lastSeen();
        ShareArbiter.Plan plan = ShareArbiter.plan(seen, broker.capacityBytes(), pool, lease.held() + bytes);
        if (!plan.feasible()) {
            wait.note = "nothing to reclaim for it: " + plan.refusal();
            return Future.succeededFuture(false);
        }
        if (plan.asks().isEmpty()) {
            return lease.take(bytes);
        }
        String reason = "gpu " + broker.gpu() + ": " + name + " is below its guarantee of "
                + ShareArbiter.guarantee(seen, broker.capacityBytes(), pool) + " bytes and needs " + plan.shortfall() + " more";
        List<String> victims = new ArrayList<>(plan.asks().keySet());
        // a pending reclaim is one deadline long until the answers say otherwise
        lease.reclaimingUntil(refusedAt + (reclaimDeadlineMs + RECLAIM_GRACE_MS) * 1_000_000);
        return broker.waiting(pool, owner, System.currentTimeMillis() + reclaimDeadlineMs + RECLAIM_GRACE_MS)
                .transform(marked -> askAndWait(lease, bytes, wait, refusedAt, seen, plan, victims, reason))
                .transform(served -> broker.waiting(pool, owner, 0).transform(cleared -> served.succeeded()
                        ? Future.succeededFuture(served.result()) : Future.<Boolean>failedFuture(served.cause())));
    }

    private Future<Boolean> askAndWait(GpuLease lease, long bytes, AllocWait wait, long refusedAt, GpuShares seen,
                                       ShareArbiter.Plan plan, List<String> victims, String reason) {
        GpuBroker broker = lease.broker();
        List<Future<ShareReclaim.Answer>> answers = new ArrayList<>(victims.size());
        for (String victim : victims) {
            GpuShares.Share share = seen.of(victim);
            long asked = plan.asks().get(victim);
            log.info("{}: asks pool {} to give back {} bytes of gpu {} ({} bytes above its guarantee)", name, victim, asked,
                    broker.gpu(), share.bytes() - ShareArbiter.guarantee(seen, broker.capacityBytes(), victim));
            answers.add(ShareReclaim.ask(vertx, share.owner(), victim, broker.gpu(), asked, reason));
        }
        // once the allocation is served, the pools asked did what was needed: none is judged, and one
        // that gave back may borrow again before its deadline without being capped for it
        boolean[] served = {false};
        return Future.join(answers).transform(joined -> {
            long deadlineMs = 0;
            for (int i = 0; i < victims.size(); i++) {
                String victim = victims.get(i);
                Future<ShareReclaim.Answer> answer = answers.get(i);
                long victimDeadlineMs = answer.succeeded() ? answer.result().deadlineMs() : reclaimDeadlineMs;
                deadlineMs = Math.max(deadlineMs, victimDeadlineMs);
                if (answer.failed()) {
                    log.warn("{}: pool {} on gpu {} did not answer its reclaim ({}); it is judged in {} ms all the same", name, victim,
                            broker.gpu(), answer.cause().getMessage(), victimDeadlineMs);
                }
                judgeAt(broker, victim, seen.of(victim).bytes(), plan.asks().get(victim), victimDeadlineMs + RECLAIM_GRACE_MS, served);
            }
            long until = refusedAt + (deadlineMs + RECLAIM_GRACE_MS) * 1_000_000;
            lease.reclaimingUntil(until);
            // a pool asked may have a longer deadline than this one's: the others hold off for as long
            Future<Void> marked = deadlineMs <= reclaimDeadlineMs ? Future.succeededFuture()
                    : broker.waiting(pool, owner, System.currentTimeMillis() + (until - System.nanoTime()) / 1_000_000);
            return marked.transform(m -> waitFor(lease, bytes, wait, refusedAt, until, "the reclaim from " + String.join(", ", victims)))
                    .onSuccess(taken -> served[0] = taken);
        });
    }

    /** Tries {@code bytes} every {@value #RECLAIM_POLL_MS} ms until taken or {@code untilNanos}. */
    private Future<Boolean> waitFor(GpuLease lease, long bytes, AllocWait wait, long refusedAt, long untilNanos, String what) {
        return lease.take(bytes).compose(taken -> {
            long now = System.nanoTime();
            if (taken) {
                wait.waitNanos = now - refusedAt;
                return Future.succeededFuture(true);
            }
            if (now - untilNanos >= 0) {
                wait.note = what + " did not free enough within " + (untilNanos - refusedAt) / 1_000_000 + " ms";
                return Future.succeededFuture(false);
            }
            long delayMs = Math.max(1, Math.min(RECLAIM_POLL_MS, (untilNanos - now) / 1_000_000));
            return vertx.timer(delayMs).compose(t -> waitFor(lease, bytes, wait, refusedAt, untilNanos, what));
        });
    }

    /**
     * In {@code afterMs}, caps {@code victim} unless it has given back {@code asked} of the {@code before}
     * bytes it held, or the allocation it was asked for was {@code served} by then.
     */
    private void judgeAt(GpuBroker broker, String victim, long before, long asked, long afterMs, boolean[] served) {
        vertx.setTimer(Math.max(1, afterMs), t -> {
            if (!served[0]) {
                judge(broker, victim, before, asked);
            }
        });
    }

    private void judge(GpuBroker broker, String victim, long before, long asked) {
        broker.capUnless(victim, now -> ShareArbiter.gaveBack(now, broker.capacityBytes(), victim, before, asked))
                .onSuccess(capped -> {
                    GpuShares.Share share = broker.lastSeen().of(victim);
                    if (capped && share != null) {
                        log.info("{}: pool {} did not give back {} bytes of gpu {} in time; it is capped at its guarantee", name, victim,
                                asked, broker.gpu());
                        ShareReclaim.capped(vertx, share.owner(), victim, broker.gpu());
                    }
                })
                .onFailure(e -> log.warn("{}: judging pool {} on gpu {} failed: {}", name, victim, broker.gpu(), e.getMessage()));
    }

    /**
     * Asked to give back {@code ask.bytes()} of a GPU: what costs nothing at once (the reserve, idle
     * handles, the lease's surplus), the rest by the engine, as whole pages' blocks; the pool is
     * restrained until its deadline, or until it has given back what it was asked.
     */
    private Future<ShareReclaim.Answer> reclaimed(ShareReclaim.Ask ask) {
        GpuLease lease = leases.get(ask.gpu());
        if (lease == null) {
            return Future.succeededFuture(new ShareReclaim.Answer(0, 0, reclaimDeadlineMs));
        }
        long before = lease.leased();
        lease.restrainFor(reclaimDeadlineMs, before - ask.bytes());
        return giveBack.cheap().transform(cheap -> lease.yieldSurplus()).transform(yielded -> {
            long given = Math.max(0, before - lease.leased());
            lease.liftRestraintIfGiven();
            long left = ask.bytes() - given;
            long pageBytes = bytesOf(lease, 1);
            long pages = left <= 0 ? 0 : (left + pageBytes - 1) / pageBytes;
            long blocks = pages == 0 ? 0 : giveBack.askEngine(pages, reclaimDeadlineMs, ask.reason());
            lease.countReclaim(blocks);
            log.info("{}: asked to give back {} bytes of gpu {}: {} at once, {} blocks asked of the engine within {} ms", name,
                    ask.bytes(), ask.gpu(), given, blocks, reclaimDeadlineMs);
            return Future.succeededFuture(new ShareReclaim.Answer(given, blocks, reclaimDeadlineMs));
        });
    }

    private void cappedOn(String gpu) {
        GpuLease lease = leases.get(gpu);
        if (lease != null) {
            lease.countCapped();
            log.warn("{}: capped at its guarantee on gpu {}: it did not give back in time", name, gpu);
        }
    }

    private PageMapFailure refusal(GpuLease lease, int pages, Future<Boolean> answer, AllocWait wait) {
        GpuBroker broker = lease.broker();
        if (answer.succeeded()) {
            GpuShares.Share own = broker.lastSeen().of(pool);
            String why = own != null && own.capped() ? "; this pool is capped at its guarantee of "
                    + ShareArbiter.guarantee(broker.lastSeen(), broker.capacityBytes(), pool) + " bytes for not giving back in time"
                    : wait != null && wait.note != null ? "; " + wait.note : "";
            return PageMapFailure.gpuShare(name + ": gpu " + broker.gpu() + " has no room for " + pages
                    + (pages == 1 ? " page" : " pages") + " (" + bytesOf(lease, pages) + " bytes on " + lease.ranks() + "): "
                    + broker.lastSeen().total() + " of " + broker.capacityBytes() + " bytes are taken by the caches on it, "
                    + lease.held() + " by this pool" + why);
        }
        return new PageMapFailure(MissReason.MAP_FAILED, name + ": the broker of gpu " + broker.gpu() + " failed: "
                + answer.cause().getMessage(), null, answer.cause());
    }

    /** Gives back the budget of {@code pages} page ids on every GPU. */
    public Future<Void> give(int pages) {
        if (pages == 0) {
            return Future.succeededFuture();
        }
        for (GpuLease lease : leases.values()) {
            lease.give(bytesOf(lease, pages));
        }
        return Future.succeededFuture();
    }

    /**
     * What the pool gives up before it yields its surplus to a recall: memory it holds but could do
     * without, such as idle handles, whose budget the step gives back when done.
     */
    public void beforeYield(Supplier<Future<Void>> step) {
        this.beforeYield = step;
    }

    private Future<Long> yieldOn(String gpu) {
        GpuLease lease = gpu == null ? null : leases.get(gpu);
        if (lease == null) {
            return Future.succeededFuture(0L);
        }
        return beforeYield.get().transform(given -> lease.yieldSurplus());
    }

    /** Gives back everything the pool holds, its standing memory included. */
    public Future<Void> close() {
        ShareReconcile.closed(vertx, this);
        List<Future<Long>> given = new ArrayList<>(leases.size());
        for (GpuLease lease : leases.values()) {
            given.add(lease.close().onFailure(e -> log.error("{}: giving its share of gpu {} back failed; it stays counted"
                    + " until this node leaves the cluster: {}", name, lease.broker().gpu(), e.getMessage())));
        }
        Future<Void> unregistered = recalls == null ? Future.succeededFuture() : recalls.unregister();
        Future<Void> unregisteredReclaims = reclaims == null ? Future.succeededFuture() : reclaims.unregister();
        return Future.join(given).transform(all -> Future.join(unregistered, unregisteredReclaims)).mapEmpty();
    }

    /** Each brokered GPU: its capacity, the bytes all caches have taken there, and this pool's. */
    public Future<List<GpuStats>> stats() {
        return stats(0);
    }

    /**
     * As {@link #stats()}, a GPU's taken bytes (and the guarantee read with them) unknown (-1) where
     * its record has not been read within {@code withinMs} (0: no bound): a shared map's entry whose
     * owning member is paused answers only once that member is counted gone, and the stats of a
     * cache are asked by status, which must answer before that.
     */
    public Future<List<GpuStats>> stats(long withinMs) {
        List<GpuLease> all = List.copyOf(leases.values());
        List<Future<Long>> taken = new ArrayList<>(all.size());
        for (GpuLease lease : all) {
            Future<Long> read = lease.broker().taken();
            taken.add(withinMs > 0 ? read.timeout(withinMs, TimeUnit.MILLISECONDS) : read);
        }
        return Future.join(taken).transform(joined -> {
            List<GpuStats> stats = new ArrayList<>(all.size());
            for (int i = 0; i < all.size(); i++) {
                GpuLease lease = all.get(i);
                Future<Long> t = taken.get(i);
                GpuBroker broker = lease.broker();
                GpuShares.Share own = t.succeeded() ? broker.lastSeen().of(pool) : null;
                stats.add(new GpuStats(broker.gpu(), lease.ranks(), broker.capacityBytes(), t.succeeded() ? t.result() : -1,
                        lease.held(), lease.leased(), t.succeeded() ? ShareArbiter.guarantee(broker.lastSeen(), broker.capacityBytes(), pool) : -1,
                        lease.reclaimsAsked(), lease.reclaimBlocksAsked(), lease.timesCapped(), own != null && own.capped()));
            }
            return Future.succeededFuture(stats);
        });
    }

    private long bytesOf(GpuLease lease, int pages) {
        return (long) pages * lease.ranks().size() * bytesPerPageId;
    }
}
