package io.kvpager.impl;

import io.kvpager.FailureCode;
import io.kvpager.GpuStats;
import io.kvpager.KvPagerException;
import io.kvpager.MissReason;
import io.kvpager.core.PageMapFailure;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.json.JsonObject;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * What one pool holds of the budgets of the GPUs its ranks run on. Each rank's worker names its
 * GPU when it creates the tensors; a page id costs {@code bytesPerPageId} on every rank, so on a
 * GPU that {@code r} of the pool's ranks share, {@code n} pages cost {@code n × r × bytesPerPageId}.
 * The memory a group may hold besides its pages (the zero page, idle handles) is taken when the
 * pool opens and held until it closes.
 *
 * <p>A rank whose worker does not name its GPU is not brokered. Runs on the coordinator's context.
 */
final class PoolBudget {

    private static final Logger log = LoggerFactory.getLogger(PoolBudget.class);

    private final Vertx vertx;
    private final String pool;
    private final long bytesPerPageId;
    private final Map<String, Share> shares = new LinkedHashMap<>();

    /** One GPU's part: its broker, how many of the pool's ranks it holds, and what the pool has taken there. */
    private static final class Share {
        final GpuBroker broker;
        final List<String> ranks = new ArrayList<>();
        long standing;
        long held;

        Share(GpuBroker broker) {
            this.broker = broker;
        }
    }

    /**
     * @param pool the pool's name in messages
     * @param bytesPerPageId physical bytes one page id costs on one rank
     */
    PoolBudget(Vertx vertx, String pool, long bytesPerPageId) {
        this.vertx = vertx;
        this.pool = pool;
        this.bytesPerPageId = bytesPerPageId;
    }

    /**
     * Opens the broker of each GPU the ranks named in their {@code create-tensors} answers and
     * takes the standing memory there. Fails with an {@link FailureCode#OUT_OF_MEMORY}
     * {@link KvPagerException} when a GPU has no room for it, after giving back what it took.
     */
    Future<Void> open(Map<RankTarget, JsonObject> created) {
        Map<String, List<Map.Entry<RankTarget, JsonObject>>> byGpu = new LinkedHashMap<>();
        for (Map.Entry<RankTarget, JsonObject> e : created.entrySet()) {
            if (e.getValue() != null && e.getValue().getValue("gpu") instanceof String gpu && !gpu.isBlank()
                    && e.getValue().getValue("gpuBytes") instanceof Number) {
                byGpu.computeIfAbsent(gpu, g -> new ArrayList<>()).add(e);
            } else {
                log.debug("{}: {} does not name its GPU; its memory is not brokered", pool, e.getKey().name());
            }
        }
        Future<Void> chain = Future.succeededFuture();
        for (Map.Entry<String, List<Map.Entry<RankTarget, JsonObject>>> gpu : byGpu.entrySet()) {
            chain = chain.compose(v -> openShare(gpu.getKey(), gpu.getValue()));
        }
        return chain.recover(e -> close().transform(closed -> Future.failedFuture(e)));
    }

    private Future<Void> openShare(String gpu, List<Map.Entry<RankTarget, JsonObject>> ranks) {
        long capacity = Long.MAX_VALUE;
        long standing = 0;
        for (Map.Entry<RankTarget, JsonObject> rank : ranks) {
            capacity = Math.min(capacity, ((Number) rank.getValue().getValue("gpuBytes")).longValue());
            standing += rank.getValue().getValue("standingBytes") instanceof Number n ? n.longValue() : 0;
        }
        long standingBytes = standing;
        return GpuBroker.open(vertx, gpu, capacity).compose(broker -> {
            Share share = new Share(broker);
            ranks.forEach(r -> share.ranks.add(r.getKey().name()));
            shares.put(gpu, share);
            if (standingBytes == 0) {
                return Future.succeededFuture();
            }
            return broker.take(standingBytes).compose(taken -> {
                if (!taken) {
                    return Future.failedFuture(new KvPagerException(FailureCode.OUT_OF_MEMORY, pool + ": gpu " + gpu
                            + " has no room for the " + standingBytes + " bytes its groups hold besides their pages: "
                            + broker.lastSeen() + " of " + broker.capacityBytes() + " bytes are taken by the caches on it"));
                }
                share.standing = standingBytes;
                share.held += standingBytes;
                return Future.succeededFuture();
            });
        });
    }

    /** Whether any GPU is brokered. */
    boolean brokered() {
        return !shares.isEmpty();
    }

    /**
     * Takes the budget of {@code pages} page ids on every GPU, all or none. A GPU without room
     * fails it with a {@link MissReason#LIMIT} {@link PageMapFailure} (the pool's share of that
     * GPU is reached), and a broker that cannot be reached with {@link MissReason#MAP_FAILED}.
     */
    Future<Void> take(int pages) {
        if (shares.isEmpty() || pages == 0) {
            return Future.succeededFuture();
        }
        // every GPU at once; a refusal anywhere gives back what the others granted
        List<Share> all = List.copyOf(shares.values());
        List<Future<Boolean>> asked = new ArrayList<>(all.size());
        for (Share share : all) {
            asked.add(share.broker.take(bytesOf(share, pages)));
        }
        return Future.join(asked).transform(joined -> {
            PageMapFailure failure = null;
            List<Share> granted = new ArrayList<>(all.size());
            for (int i = 0; i < all.size(); i++) {
                Share share = all.get(i);
                Future<Boolean> answer = asked.get(i);
                long bytes = bytesOf(share, pages);
                if (answer.succeeded() && answer.result()) {
                    share.held += bytes;
                    granted.add(share);
                } else if (failure == null) {
                    failure = answer.succeeded()
                            ? new PageMapFailure(MissReason.LIMIT, pool + ": gpu " + share.broker.gpu() + " has no room for "
                                    + pages + (pages == 1 ? " page" : " pages") + " (" + bytes + " bytes on " + share.ranks + "): "
                                    + share.broker.lastSeen() + " of " + share.broker.capacityBytes()
                                    + " bytes are taken by the caches on it, " + share.held + " by this pool", null, null)
                            : new PageMapFailure(MissReason.MAP_FAILED, pool + ": the broker of gpu " + share.broker.gpu()
                                    + " failed: " + answer.cause().getMessage(), null, answer.cause());
                }
            }
            if (failure == null) {
                return Future.succeededFuture();
            }
            PageMapFailure refused = failure;
            List<Future<Void>> undone = new ArrayList<>(granted.size());
            for (Share share : granted) {
                undone.add(giveBack(share, bytesOf(share, pages)));
            }
            return Future.join(undone).transform(given -> Future.failedFuture(refused));
        });
    }

    /** Gives back the budget of {@code pages} page ids on every GPU. */
    Future<Void> give(int pages) {
        if (shares.isEmpty() || pages == 0) {
            return Future.succeededFuture();
        }
        List<Future<Void>> given = new ArrayList<>(shares.size());
        for (Share share : shares.values()) {
            given.add(giveBack(share, bytesOf(share, pages)));
        }
        return Future.join(given).mapEmpty();
    }

    private Future<Void> giveBack(Share share, long bytes) {
        return share.broker.give(bytes).onSuccess(v -> share.held -= bytes)
                .onFailure(e -> log.error("{}: giving {} bytes back to the broker of gpu {} failed; they stay counted: {}",
                        pool, bytes, share.broker.gpu(), e.getMessage()));
    }

    /** Gives back everything the pool holds, its standing memory included. */
    Future<Void> close() {
        List<Future<Void>> given = new ArrayList<>(shares.size());
        for (Share share : shares.values()) {
            given.add(giveBack(share, share.held));
        }
        return Future.join(given).mapEmpty();
    }

    /** Each brokered GPU: its capacity, the bytes all caches have taken there, and this pool's. */
    Future<List<GpuStats>> stats() {
        List<Share> all = List.copyOf(shares.values());
        List<Future<Long>> taken = new ArrayList<>(all.size());
        for (Share share : all) {
            taken.add(share.broker.taken());
        }
        return Future.join(taken).transform(joined -> {
            List<GpuStats> stats = new ArrayList<>(all.size());
            for (int i = 0; i < all.size(); i++) {
                Share share = all.get(i);
                Future<Long> t = taken.get(i);
                stats.add(new GpuStats(share.broker.gpu(), share.ranks, share.broker.capacityBytes(),
                        t.succeeded() ? t.result() : -1, share.held));
            }
            return Future.succeededFuture(stats);
        });
    }

    private long bytesOf(Share share, int pages) {
        return (long) pages * share.ranks.size() * bytesPerPageId;
    }
}
