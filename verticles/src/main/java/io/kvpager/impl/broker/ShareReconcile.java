package io.kvpager.impl.broker;

import io.kvpager.internal.books.SealedBooks;
import io.kvpager.internal.membership.ClusterMembership;
import io.kvpager.protocol.Owner;
import io.vertx.core.Context;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.Vertx;
import io.vertx.core.internal.VertxInternal;
import io.vertx.core.shareddata.AsyncMap;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.WeakHashMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Supplier;

/**
 * Rebuilds every GPU's budget record from the truth after the membership changes: Hazelcast's maps
 * stay writable on both sides of a split and pick entries when the sides merge, so a record may come
 * back without the share of a pool that holds memory, or with the share of an owner that is gone.
 * Each node answers for what it runs: on every GPU record it
 * <ul>
 *   <li>removes the shares of owners whose node is not a member, and of owners on this node that no
 *       pool here holds any more (a displaced incarnation, one that closed);</li>
 *   <li>raises the share of each pool that runs here to what the broker granted its lease
 *       ({@link #confirmed}: never a take still waiting for the broker, which may be refused), where
 *       the record shows less or nothing;</li>
 * </ul>
 * each by compare-and-set of the whole record, as {@link GpuBroker} writes it. Who is a member,
 * which pools run here and what their leases hold are asked again after each read of a record,
 * right before deciding on it (a lease read before the record may have been given back since, and
 * a raise to it would bring back bytes the record no longer grants): a
 * pool registers here before its first claim, so a share that a read shows was claimed by a pool
 * running here, or by a member, whatever started meanwhile (a new incarnation of a displaced pool,
 * a node that merged back). A round that judged on what ran when it began would remove the share of
 * a pool that opened while it waited for the record, leaving that pool's memory uncounted.
 * A record whose shares
 * then exceed the GPU's capacity (two sides granted the same free bytes) is logged as over-granted:
 * the leases' surplus goes back as their pools go idle, and no new grant is made while it lasts,
 * since {@link GpuBroker} judges every grant against the record.
 *
 * <p>Runs on every node that opened a GPU broker, after each member joins or leaves and after this
 * node merges back into the cluster; and every {@link #RECHECK_MS} ms while pools run here it
 * raises (never removes) the shares of its own pools, since the
 * entries of the side that merges in are applied after the merge is announced, so a round run at
 * the announcement can read this side's record (with a new incarnation's claim) and find nothing
 * to do, before the larger side's record (without that claim) replaces it. A check that finds the
 * record right reads it and writes nothing.
 */
public final class ShareReconcile {

    private static final Logger log = LoggerFactory.getLogger(ShareReconcile.class);
    private static final int MAX_ROUNDS = 16;
    /** How often each node checks the records against its pools, besides on every membership change. */
    static final long RECHECK_MS = 2_000;
    /** The pools that run on each node (Vert.x), with the context each runs on. */
    private static final Map<Vertx, Map<PoolBudget, Context>> LIVE = Collections.synchronizedMap(new WeakHashMap<>());
    private static final Map<ClusterMembership, Boolean> WATCHED = Collections.synchronizedMap(new WeakHashMap<>());

    private ShareReconcile() {
    }

    /** {@code budget} holds shares from now on; call on its context. */
    static void opened(Vertx vertx, PoolBudget budget) {
        Context context = Vertx.currentContext();
        LIVE.computeIfAbsent(vertx, v -> new ConcurrentHashMap<>()).put(budget, context != null ? context : vertx.getOrCreateContext());
        ClusterMembership membership = ClusterMembership.of(vertx);
        if (membership != null && WATCHED.putIfAbsent(membership, Boolean.TRUE) == null) {
            Context own = ((VertxInternal) vertx).createEventLoopContext();
            Runnable run = () -> reconcile(vertx, membership::nodes, membership.nodeId())
                    .onFailure(e -> log.warn("reconciling the GPU budget records failed: {}; the next membership change tries again",
                            e.getMessage()));
            membership.subscribeChanges(own, run);
            membership.subscribeDisplacement(own, why -> { }, run);
            AtomicBoolean checking = new AtomicBoolean();
            own.runOnContext(v -> vertx.setPeriodic(RECHECK_MS, id -> {
                if (!LIVE.getOrDefault(vertx, Map.of()).isEmpty() && membership.displacedBecause() == null && checking.compareAndSet(false, true)) {
                    reconcile(vertx, membership::nodes, membership.nodeId(), false)
                            .onComplete(done -> checking.set(false))
                            .onFailure(e -> log.debug("checking the GPU budget records failed: {}", e.getMessage()));
                }
            }));
        }
    }

    /** {@code budget} holds no share any more. */
    static void closed(Vertx vertx, PoolBudget budget) {
        Map<PoolBudget, Context> live = LIVE.get(vertx);
        if (live != null) {
            live.remove(budget);
        }
    }

    /**
     * Reconciles every GPU's record with {@code members} (the cluster's nodes now) and the pools
     * that run on {@code localNode}; completes with the records rewritten.
     */
    public static Future<Integer> reconcile(Vertx vertx, Set<String> members, String localNode) {
        Set<String> fixed = Set.copyOf(members);
        return reconcile(vertx, () -> fixed, localNode);
    }

    /** As {@link #reconcile(Vertx, Set, String)}, asking {@code members} for the cluster's nodes at each decision. */
    static Future<Integer> reconcile(Vertx vertx, Supplier<Set<String>> members, String localNode) {
        return reconcile(vertx, members, localNode, true);
    }

    /**
     * As {@link #reconcile(Vertx, Supplier, String)}; {@code remove} {@code false} only raises the
     * shares of the pools here (the periodic check: a member that joined a moment ago may have
     * claimed before this node hears of it, and its share must not go for that).
     */
    static Future<Integer> reconcile(Vertx vertx, Supplier<Set<String>> members, String localNode, boolean remove) {
        return SealedBooks.keptText(vertx, GpuBroker.SHARES).compose(shares -> reconcile(vertx, shares, members, localNode, remove));
    }

    /**
     * As {@link #reconcile(Vertx, Supplier, String, boolean)} on the records {@code shares}. Only a
     * round that may remove shares reads which GPUs have a record ({@code keys()}, a query of every
     * member): the periodic check raises only the shares of the pools here, so it reads the records
     * of the GPUs they lease on, each by its key. A query meets every member, a leaving one too, and
     * Hazelcast logs a WARN (WrongTargetException) on a query that meets a member on its way out; the
     * periodic check runs every 2 s whatever happens, so it ran into members' leaves.
     */
    static Future<Integer> reconcile(Vertx vertx, AsyncMap<String, String> shares, Supplier<Set<String>> members, String localNode,
                                     boolean remove) {
        Supplier<Set<Owner>> owners = () -> ownersHere(vertx);
        return leasesHere(vertx).compose(leases -> SealedBooks.keptLongs(vertx, GpuBroker.CAPACITIES)
                .compose(capacities -> (remove ? shares.keys() : Future.succeededFuture(Set.<String>of())).compose(recorded -> {
                    // a GPU whose whole record a merge lost is one a pool here still leases on
                    Set<String> gpus = new java.util.TreeSet<>(recorded);
                    gpus.addAll(leases.keySet());
                    List<Future<Boolean>> done = new ArrayList<>();
                    for (String gpu : gpus) {
                        // the leases are read again after each read of the record, right before deciding on it
                        Supplier<Future<Map<String, Held>>> leasedNow = () -> leasesHere(vertx)
                                .map(now -> now.getOrDefault(gpu, Map.of()));
                        done.add(capacities.get(gpu).compose(capacity -> reconcile(shares, gpu, capacity, members, localNode,
                                owners, leasedNow, remove, 0)));
                    }
                    return Future.all(done).map(all -> (int) done.stream().filter(Future::result).count());
                })));
    }

    /** What a pool here holds on one GPU: its owner and the bytes its lease holds. */
    private record Held(Owner owner, long leased) {
    }

    /** The owners of the pools running on this node now: registered before their first claim, until they close. */
    private static Set<Owner> ownersHere(Vertx vertx) {
        Set<Owner> owners = new java.util.HashSet<>();
        for (PoolBudget pool : Map.copyOf(LIVE.getOrDefault(vertx, Map.of())).keySet()) {
            owners.add(pool.owner());
        }
        return owners;
    }

    /**
     * What {@code lease} holds for certain: the share the broker granted it. A take waiting for the
     * broker counts as held in the lease (so that no other take here counts on the bytes meanwhile)
     * but may yet be refused: a share raised to it would grant bytes the broker is refusing, over the
     * GPU's capacity (seen: 160 MiB of a 128 MiB GPU recorded while a take of 64 MiB was being
     * refused). Read on the pool's context.
     */
    static long confirmed(GpuLease lease) {
        return lease.leased();
    }

    /** Each GPU's leases of the pools on this node, read on each pool's context. */
    private static Future<Map<String, Map<String, Held>>> leasesHere(Vertx vertx) {
        Map<PoolBudget, Context> live = LIVE.getOrDefault(vertx, Map.of());
        List<Future<Map<String, Map<String, Held>>>> read = new ArrayList<>();
        for (Map.Entry<PoolBudget, Context> pool : Map.copyOf(live).entrySet()) {
            Promise<Map<String, Map<String, Held>>> one = Promise.promise();
            pool.getValue().runOnContext(v -> {
                Map<String, Map<String, Held>> byGpu = new HashMap<>();
                for (GpuLease lease : pool.getKey().leases()) {
                    byGpu.computeIfAbsent(lease.broker().gpu(), g -> new LinkedHashMap<>())
                            .put(pool.getKey().poolName(), new Held(pool.getKey().owner(), confirmed(lease)));
                }
                one.complete(byGpu);
            });
            read.add(one.future());
        }
        return Future.all(read).map(all -> {
            Map<String, Map<String, Held>> merged = new HashMap<>();
            for (Future<Map<String, Map<String, Held>>> f : read) {
                f.result().forEach((gpu, pools) -> merged.computeIfAbsent(gpu, g -> new LinkedHashMap<>()).putAll(pools));
            }
            return merged;
        });
    }

    private static Future<Boolean> reconcile(AsyncMap<String, String> shares, String gpu, Long capacity, Supplier<Set<String>> membersNow,
                                             String localNode, Supplier<Set<Owner>> ownersNow, Supplier<Future<Map<String, Held>>> leasedNow,
                                             boolean remove, int round) {
        return shares.get(gpu).compose(text -> leasedNow.get().compose(leased -> {
            // judged on who runs now and what their leases hold now, after the read: see the class comment
            Set<String> members = membersNow.get();
            Set<Owner> owners = ownersNow.get();
            Map<String, Held> here = new LinkedHashMap<>(leased);
            here.values().removeIf(held -> !owners.contains(held.owner()));
            GpuShares now = GpuShares.parse(text);
            Map<String, GpuShares.Share> next = new LinkedHashMap<>(now.shares());
            List<String> changes = new ArrayList<>();
            now.shares().forEach((pool, share) -> {
                Owner owner = share.owner();
                boolean departed = !members.contains(owner.nodeId());
                boolean gone = owner.isOn(localNode) && !owners.contains(owner);
                if (remove && (departed || gone)) {
                    next.remove(pool);
                    changes.add(pool + " of " + (departed ? "departed" : "gone") + " owner " + owner + " (" + share.bytes() + " bytes) removed");
                }
            });
            here.forEach((pool, held) -> {
                GpuShares.Share recorded = next.get(pool);
                if (recorded != null && !recorded.owner().equals(held.owner())) {
                    // another incarnation of the pool claimed it: this one's next take fails, and it is displaced
                    return;
                }
                if (recorded == null || recorded.bytes() < held.leased()) {
                    next.put(pool, new GpuShares.Share(held.owner(), held.leased()));
                    changes.add(pool + " of owner " + held.owner() + " set to the " + held.leased() + " bytes its lease holds (the record had "
                            + (recorded == null ? "none" : recorded.bytes()) + ")");
                }
            });
            if (changes.isEmpty()) {
                warnIfOverGranted(gpu, capacity, now);
                return Future.succeededFuture(false);
            }
            GpuShares rebuilt = new GpuShares(next);
            Future<Boolean> written = text == null ? shares.putIfAbsent(gpu, rebuilt.encode()).map(before -> before == null)
                    : shares.replaceIfPresent(gpu, text, rebuilt.encode());
            return written.compose(done -> {
                if (done) {
                    log.info("gpu {}: budget record reconciled with the members and the pools running: {}", gpu, String.join("; ", changes));
                    warnIfOverGranted(gpu, capacity, rebuilt);
                    return Future.succeededFuture(true);
                }
                if (round >= MAX_ROUNDS) {
                    return Future.failedFuture(new IllegalStateException("gpu " + gpu + ": gave up reconciling its record after "
                            + MAX_ROUNDS + " rounds lost to other writers"));
                }
                return reconcile(shares, gpu, capacity, membersNow, localNode, ownersNow, leasedNow, remove, round + 1);
            });
        }));
    }

    private static void warnIfOverGranted(String gpu, Long capacity, GpuShares shares) {
        if (capacity != null && shares.total() > capacity) {
            log.warn("gpu {}: its shares add up to {} bytes, over its capacity of {} (granted on both sides of a split); no new grant"
                    + " until the pools give their surplus back: {}", gpu, shares.total(), capacity, shares.shares());
        }
    }
}
