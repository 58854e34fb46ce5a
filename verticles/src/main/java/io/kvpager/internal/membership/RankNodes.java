package io.kvpager.internal.membership;

import io.kvpager.protocol.PoolRanks;
import io.kvpager.protocol.RankTarget;
import io.vertx.core.Context;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.Vertx;
import io.vertx.core.eventbus.Message;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.Consumer;
import java.util.function.Supplier;

/**
 * Which cluster node serves each rank of a pool, and what becomes of the requests to a rank whose
 * node leaves the cluster.
 *
 * <p>The event bus does not fail a request whose target process died: the request waits for the
 * send timeout. So every request to a rank is tracked until it is answered, and when the cluster
 * removes the rank's node, the requests still in flight fail at once with {@link RankDeparted},
 * naming the rank and the node. Until a worker for the rank joins again, a request to it is not
 * sent at all (the event bus may still route it to the dead node for a moment) and fails the same
 * way; it is sent again as soon as the cluster's registry shows a live node at the rank's address.
 *
 * <p>A rank's node is learnt from the cluster's registry after its first answer, so nothing has
 * to be configured and a worker that moves to another process is followed. In a Vert.x that is
 * not clustered every request goes straight to the event bus: a stopped local worker has no
 * consumer, and the bus fails such requests at once.
 *
 * <p>Runs on the coordinator's context; membership notices are brought onto it.
 */
public final class RankNodes {

    private static final Logger log = LoggerFactory.getLogger(RankNodes.class);

    private final PoolRanks pool;
    private final Context context;
    private final ClusterMembership membership;
    private final Consumer<List<RankTarget>> onDeparted;
    private final Map<RankTarget, List<String>> nodes = new HashMap<>();
    private final Set<RankTarget> looking = new LinkedHashSet<>();
    private final Map<RankTarget, Departure> departed = new LinkedHashMap<>();
    private final Map<RankTarget, Set<Promise<Message<Object>>>> inFlight = new HashMap<>();
    private final Runnable unsubscribe;

    /** Why requests to a rank fail without being sent: its node left, and when. */
    private record Departure(String node, long atNanos) {
    }

    private RankNodes(PoolRanks pool, Context context, ClusterMembership membership, Consumer<List<RankTarget>> onDeparted) {
        this.pool = pool;
        this.context = context;
        this.membership = membership;
        this.onDeparted = onDeparted;
        this.unsubscribe = membership == null ? () -> { } : membership.subscribe(context, this::nodeLeft);
    }

    /**
     * The tracker of {@code pool}'s ranks on {@code vertx}, calling {@code onDeparted} on
     * {@code context} with the ranks whose node left; a pass-through when {@code vertx} is not clustered.
     */
    public static RankNodes of(Vertx vertx, Context context, PoolRanks pool, Consumer<List<RankTarget>> onDeparted) {
        return new RankNodes(pool, context, ClusterMembership.of(vertx), onDeparted);
    }

    /** A pass-through, for a fan-out outside a cluster. */
    public static RankNodes local(PoolRanks pool) {
        return new RankNodes(pool, null, null, ranks -> { });
    }

    /**
     * Sends one request to {@code rank} with {@code send}, unless the rank's node has left and no
     * other has taken its place; the future fails with {@link RankDeparted} then, and when the
     * node leaves while the request is in flight.
     */
    public Future<Message<Object>> request(RankTarget rank, String action, Supplier<Future<Message<Object>>> send) {
        if (membership == null) {
            return send.get();
        }
        Departure departure = departed.get(rank);
        if (departure == null) {
            return tracked(rank, send);
        }
        return membership.nodesServing(context, rank.address(pool.instance())).transform(ar -> {
            List<String> live = ar.succeeded() ? live(ar.result()) : List.of();
            if (live.isEmpty()) {
                return Future.failedFuture(new RankDeparted(rank.name() + " is down: its node " + departure.node
                        + " left the cluster " + (System.nanoTime() - departure.atNanos) / 1_000_000
                        + " ms ago and no worker has joined at " + rank.address(pool.instance()) + " since; " + action + " not sent"));
            }
            if (departed.remove(rank) != null) {
                log.info("{} of {} is served again, by node {}", rank.name(), pool.instance(), live);
            }
            nodes.put(rank, live);
            return tracked(rank, send);
        });
    }

    /** Whether this node began to leave the cluster ({@link ClusterMembership#stopping}): a rank's leaving is then told at INFO. */
    public boolean nodeStopping() {
        return membership != null && membership.isStopping();
    }

    /** Stops following the membership. */
    public void close() {
        unsubscribe.run();
    }

    private Future<Message<Object>> tracked(RankTarget rank, Supplier<Future<Message<Object>>> send) {
        Promise<Message<Object>> answer = Promise.promise();
        Set<Promise<Message<Object>>> pending = inFlight.computeIfAbsent(rank, r -> new LinkedHashSet<>());
        pending.add(answer);
        send.get().onComplete(ar -> {
            pending.remove(answer);
            if (ar.succeeded() && !nodes.containsKey(rank)) {
                learn(rank);
            }
            if (ar.succeeded()) {
                answer.tryComplete(ar.result());
            } else {
                answer.tryFail(ar.cause());
            }
        });
        return answer.future();
    }

    /** Looks the rank's node up in the cluster's registry, once at a time. */
    private void learn(RankTarget rank) {
        if (!looking.add(rank)) {
            return;
        }
        membership.nodesServing(context, rank.address(pool.instance())).onComplete(ar -> {
            looking.remove(rank);
            if (ar.failed()) {
                log.debug("{}: looking up its node failed: {}", rank.name(), ar.cause().getMessage());
                return;
            }
            List<String> live = live(ar.result());
            if (live.isEmpty()) {
                // answered, then gone before the lookup: its node left, or its worker stopped
                log.debug("{}: no live node serves it any more", rank.name());
                return;
            }
            nodes.put(rank, live);
        });
    }

    /**
     * A node left: its ranks are departed, and their requests in flight fail now. A rank with
     * requests in flight whose node is not known yet is looked up: the cluster has already removed
     * the left node's consumers from its registry, so no live node at its address means it was there.
     */
    private void nodeLeft(String node) {
        List<RankTarget> gone = new ArrayList<>();
        for (RankTarget rank : pool.ranks()) {
            List<String> serving = nodes.get(rank);
            if (serving == null) {
                if (!inFlight.getOrDefault(rank, Set.of()).isEmpty()) {
                    membership.nodesServing(context, rank.address(pool.instance())).onSuccess(found -> {
                        if (live(found).isEmpty() && !nodes.containsKey(rank) && !departed.containsKey(rank)) {
                            depart(List.of(rank), node);
                        }
                    });
                }
                continue;
            }
            if (!serving.contains(node)) {
                continue;
            }
            List<String> rest = new ArrayList<>(serving);
            rest.remove(node);
            if (rest.isEmpty()) {
                nodes.remove(rank);
                gone.add(rank);
            } else {
                nodes.put(rank, rest);
            }
        }
        if (!gone.isEmpty()) {
            depart(gone, node);
        }
    }

    private void depart(List<RankTarget> gone, String node) {
        int failed = 0;
        for (RankTarget rank : gone) {
            departed.put(rank, new Departure(node, System.nanoTime()));
            Set<Promise<Message<Object>>> pending = inFlight.remove(rank);
            if (pending == null) {
                continue;
            }
            for (Promise<Message<Object>> p : List.copyOf(pending)) {
                failed += p.tryFail(new RankDeparted(rank.name() + " left the cluster: its node " + node
                        + " was removed while the request was in flight (" + rank.address(pool.instance()) + ")")) ? 1 : 0;
            }
        }
        if (nodeStopping()) {
            log.info("node {} left the cluster while this node stops too: {} of {} down, {} requests in flight failed", node, gone,
                    pool.instance(), failed);
        } else {
            log.warn("node {} left the cluster: {} of {} down, {} requests in flight failed", node, gone, pool.instance(), failed);
        }
        onDeparted.accept(List.copyOf(gone));
    }

    private List<String> live(List<String> serving) {
        Set<String> members = membership.nodes();
        List<String> live = new ArrayList<>(serving.size());
        for (String n : serving) {
            if (members.contains(n)) {
                live.add(n);
            }
        }
        return live;
    }
}
