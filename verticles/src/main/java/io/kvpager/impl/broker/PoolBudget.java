package io.kvpager.impl.broker;

import io.kvpager.FailureCode;
import io.kvpager.MissReason;
import io.kvpager.cache.GpuStats;
import io.kvpager.cache.KvPagerException;
import io.kvpager.core.PageMapFailure;
import io.kvpager.impl.coordinator.RankTarget;
import io.kvpager.impl.protocol.Owner;
import io.kvpager.impl.protocol.CreateTensorsReply;
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
 * ({@link SurplusRecall}) and tries once more.
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
    private Supplier<Future<Void>> beforeYield = Future::succeededFuture;

    /**
     * @param name the pool's name in messages
     * @param pool the pool's name in the GPUs' shares, the same for every owner of the pool
     * @param owner the coordinator incarnation that owns the pool's shares
     * @param bytesPerPageId physical bytes one page id costs on one rank
     */
  public   PoolBudget(Vertx vertx, String name, String pool, Owner owner, long bytesPerPageId) {
        this.vertx = vertx;
        this.name = name;
        this.pool = pool;
        this.owner = owner;
        this.bytesPerPageId = bytesPerPageId;
    }

    /**
     * Opens the broker of each GPU the ranks named in their {@code create-tensors} answers and
     * claims the standing memory there. Fails with an {@link FailureCode#OUT_OF_MEMORY}
     * {@link KvPagerException} when a GPU has no room for it, after giving back what it took.
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
        Future<Void> chain = recalls.completion();
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
        return GpuBroker.open(vertx, gpu, capacity).compose(broker -> broker.claim(pool, owner, standingBytes).compose(claimed -> {
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
     * fails it with a {@link MissReason#LIMIT} {@link PageMapFailure} (the pool's share of that
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
        List<GpuLease> all = List.copyOf(leases.values());
        List<Future<Boolean>> asked = new ArrayList<>(all.size());
        for (GpuLease lease : all) {
            asked.add(takeOrRecall(lease, bytesOf(lease, pages)));
        }
        return Future.join(asked).transform(joined -> {
            PageMapFailure failure = null;
            for (int i = 0; i < all.size(); i++) {
                GpuLease lease = all.get(i);
                Future<Boolean> answer = asked.get(i);
                if (failure == null && !(answer.succeeded() && answer.result())) {
                    failure = refusal(lease, pages, answer);
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

    /** Takes {@code bytes} on {@code lease}'s GPU; refused, recalls the other pools' surplus there and tries again. */
    private Future<Boolean> takeOrRecall(GpuLease lease, long bytes) {
        return lease.take(bytes).compose(taken -> taken ? Future.succeededFuture(true)
                : SurplusRecall.ask(vertx, lease.broker().gpu(), lease.broker().lastSeen(), pool).compose(asked -> lease.take(bytes)));
    }

    private PageMapFailure refusal(GpuLease lease, int pages, Future<Boolean> answer) {
        GpuBroker broker = lease.broker();
        if (answer.succeeded()) {
            return PageMapFailure.gpuShare(name + ": gpu " + broker.gpu() + " has no room for " + pages
                    + (pages == 1 ? " page" : " pages") + " (" + bytesOf(lease, pages) + " bytes on " + lease.ranks() + "): "
                    + broker.lastSeen().total() + " of " + broker.capacityBytes() + " bytes are taken by the caches on it, "
                    + lease.held() + " by this pool");
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
        return Future.join(given).transform(all -> unregistered).mapEmpty();
    }

    /** Each brokered GPU: its capacity, the bytes all caches have taken there, and this pool's. */
    public Future<List<GpuStats>> stats() {
        List<GpuLease> all = List.copyOf(leases.values());
        List<Future<Long>> taken = new ArrayList<>(all.size());
        for (GpuLease lease : all) {
            taken.add(lease.broker().taken());
        }
        return Future.join(taken).transform(joined -> {
            List<GpuStats> stats = new ArrayList<>(all.size());
            for (int i = 0; i < all.size(); i++) {
                GpuLease lease = all.get(i);
                Future<Long> t = taken.get(i);
                stats.add(new GpuStats(lease.broker().gpu(), lease.ranks(), lease.broker().capacityBytes(),
                        t.succeeded() ? t.result() : -1, lease.held(), lease.leased()));
            }
            return Future.succeededFuture(stats);
        });
    }

    private long bytesOf(GpuLease lease, int pages) {
        return (long) pages * lease.ranks().size() * bytesPerPageId;
    }
}
