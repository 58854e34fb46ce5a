package io.kvpager.internal.membership;

import io.vertx.core.Context;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.Vertx;
import io.vertx.core.internal.VertxInternal;
import io.vertx.core.spi.cluster.ClusterManager;
import io.vertx.core.spi.cluster.NodeListener;
import io.vertx.core.spi.cluster.RegistrationInfo;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.lang.ref.WeakReference;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.WeakHashMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.Consumer;

/**
 * The cluster's membership as one clustered Vert.x sees it: which nodes are members now, which
 * nodes consume at an event-bus address, and a notice on the subscriber's own context when a node
 * leaves. Only Vert.x's cluster SPI is used, never the cluster manager's own classes, so this works
 * with any cluster manager and loads without one.
 *
 * <p>A member that leaves gracefully says so first ({@link #nodeLeaving}): the cluster manager
 * drops it from its list only after it has gone, which the subscribers need not wait for.
 *
 * <p>A cluster manager takes a single {@link NodeListener}; this class installs one per cluster
 * manager and fans its notices out to every subscriber (every coordinator in the process). Vert.x
 * HA uses that same slot, so kvpager nodes run without HA ({@code ClusterNode} never enables it).
 *
 * <p>That listener hears a departure late: Vert.x's Hazelcast cluster manager first removes the
 * departed node's registrations and entry from the cluster's maps, on Hazelcast's event thread, and
 * only then calls it (seconds later on a loaded machine, with partitions migrating). The cluster
 * manager's member list drops the node before that, so a node that {@link #watchMembers watches}
 * it also reads that list every {@value #WATCH_MS} ms and tells a node that is no longer in it
 * gone at once; the listener's notice that follows only tells the change subscribers again (the
 * registry is clean by then). Each departure is told once to the departure subscribers, by
 * whichever comes first.
 *
 * <p>A node can also learn that the others counted <em>it</em> gone: after a pause or a partition
 * the side it was on merges into the larger one ({@link #displaced}), and then it is a member of
 * the whole cluster again ({@link #rejoined}). The cluster manager's own events say so; whoever
 * owns the cluster manager relays them here ({@code ClusterNode} does), and subscribers hear them
 * on their own context ({@link #subscribeDisplacement}).
 */
public final class ClusterMembership {

    private static final Logger log = LoggerFactory.getLogger(ClusterMembership.class);
    /** Weak both ways: the cluster manager's listener holds the membership, and nothing here should hold the manager. */
    private static final Map<ClusterManager, WeakReference<ClusterMembership>> INSTALLED = new WeakHashMap<>();
    /** How often a watching node reads the cluster manager's member list. */
    public static final long WATCH_MS = 100;

    private final ClusterManager manager;
    private final List<Subscriber> subscribers = new CopyOnWriteArrayList<>();
    /** Members that said they are leaving and are still in the cluster manager's list. */
    private final Set<String> leaving = ConcurrentHashMap.newKeySet();
    private final List<DisplacementSubscriber> displacementSubscribers = new CopyOnWriteArrayList<>();
    private final List<Subscriber> changeSubscribers = new CopyOnWriteArrayList<>();
    /** Set once this node began to leave the cluster ({@link #stopping}). */
    private volatile boolean stopping;
    /** Why this node was displaced, while it has not rejoined yet; {@code null} otherwise. */
    private volatile String displacedBecause;
    /**
     * Departures told by one of the two ways of hearing them (the member list, the node listener)
     * that the other has yet to hear, so that it tells them no second time, with when they were
     * told ({@link System#nanoTime}). Guarded by itself, as is {@link #lastRead}.
     */
    private final Map<String, Long> toldGone = new HashMap<>();
    /** The member list as the last read saw it; {@code null} before the first read, after one that failed, and while displaced. */
    private Set<String> lastRead;
    /** The watch's periodic timer; {@code -1} while not watching. */
    private long watchTimer = -1;

    private ClusterMembership(ClusterManager manager) {
        this.manager = manager;
    }

    /** The membership of {@code vertx}'s cluster, or {@code null} when {@code vertx} is not clustered. */
    public static ClusterMembership of(Vertx vertx) {
        if (!vertx.isClustered() || !(vertx instanceof VertxInternal internal) || internal.clusterManager() == null) {
            return null;
        }
        return of(internal.clusterManager());
    }

    /**
     * The membership of the cluster {@code manager} joins; installs its node listener the first
     * time. Call it before the node joins where possible, so that the listener is in place (and
     * safely published) before the cluster manager's threads start.
     */
    public static synchronized ClusterMembership of(ClusterManager manager) {
        WeakReference<ClusterMembership> installed = INSTALLED.get(manager);
        ClusterMembership membership = installed == null ? null : installed.get();
        if (membership == null) {
            membership = new ClusterMembership(manager);
            manager.nodeListener(membership.listener());
            INSTALLED.put(manager, new WeakReference<>(membership));
        }
        return membership;
    }

    private NodeListener listener() {
        return new NodeListener() {
            @Override
            public void nodeAdded(String nodeId) {
                log.debug("node {} joined the cluster", nodeId);
                notifyChanged(nodeId);
            }

            @Override
            public void nodeLeft(String nodeId) {
                synchronized (toldGone) {
                    Long told = toldGone.remove(nodeId);
                    if (told != null) {
                        log.debug("node {} left the cluster: the node listener's notice, {} ms after the member list's", nodeId,
                                (System.nanoTime() - told) / 1_000_000);
                        notifyChanged(nodeId);
                        return;
                    }
                    if (lastRead != null && lastRead.contains(nodeId)) {
                        // the member list's next read will find it gone: told here (or when it said it was leaving), not there
                        toldGone.put(nodeId, System.nanoTime());
                    }
                    if (leaving.remove(nodeId)) {
                        log.debug("node {} left the cluster, as it said it would", nodeId);
                        return;
                    }
                }
                log.info("node {} left the cluster", nodeId);
                notifyLeft(nodeId);
                notifyChanged(nodeId);
            }
        };
    }

    /**
     * Reads the cluster manager's member list every {@value #WATCH_MS} ms on {@code vertx}, and
     * tells each node missing from it gone at once, ahead of the node listener (see the class
     * comment). Not while this node is displaced or stopping: the list is being rebuilt then, and
     * the node listener tells what the rebuilt one lacks. Once per membership; the watch ends
     * with {@code vertx}.
     */
    public synchronized void watchMembers(Vertx vertx) {
        if (watchTimer < 0) {
            watchTimer = vertx.setPeriodic(WATCH_MS, WATCH_MS, id -> readMembers());
        }
    }

    /**
     * One read of the member list: a node that was in the last read, is not in this one, is not
     * this node and did not say it is leaving, is told gone to the subscribers now, unless the node
     * listener told it first.
     */
    void readMembers() {
        Set<String> now = null;
        if (!stopping && displacedBecause == null) {
            try {
                now = Set.copyOf(manager.getNodes());
            } catch (RuntimeException notRunning) {
                // the member is stopping or restarting: the node listener speaks for what happens meanwhile
            }
        }
        List<String> gone = new ArrayList<>();
        synchronized (toldGone) {
            Set<String> before = lastRead;
            lastRead = now;
            if (before == null || now == null) {
                return;
            }
            for (String node : before) {
                if (!now.contains(node) && !node.equals(manager.getNodeId()) && !leaving.contains(node)
                        && toldGone.remove(node) == null) {
                    toldGone.put(node, System.nanoTime());
                    gone.add(node);
                }
            }
        }
        for (String node : gone) {
            log.info("node {} left the cluster", node);
            notifyLeft(node);
            notifyChanged(node);
        }
    }

    /**
     * A member says it is leaving: it has stopped what it ran and is about to leave the cluster
     * gracefully. The cluster manager takes it off its member list only some time after it has
     * gone, so the subscribers hear it now, once, and {@link #nodes()} no longer counts it.
     */
    public void nodeLeaving(String nodeId) {
        if (!nodeId.equals(manager.getNodeId()) && manager.getNodes().contains(nodeId) && leaving.add(nodeId)) {
            log.info("node {} is leaving the cluster", nodeId);
            notifyLeft(nodeId);
        }
    }

    /**
     * This node began to leave the cluster: what its subscribers hear from here on about others
     * leaving is, most often, the rest of a cluster stopped with it (SIGTERM to every node), not a
     * loss an operator must act on.
     */
    public void stopping() {
        stopping = true;
    }

    /** Whether this node began to leave the cluster. */
    public boolean isStopping() {
        return stopping;
    }

    private void notifyChanged(String nodeId) {
        for (Subscriber s : changeSubscribers) {
            s.context.runOnContext(v -> s.onLeft.accept(nodeId));
        }
    }

    /**
     * Calls {@code onChange} on {@code context} after each member joins or leaves the cluster,
     * until the returned handle is run; not when a member that said it was leaving goes (it gave
     * back what it held as it stopped, and a whole cluster stopped at once should not be asked
     * its books while it closes).
     */
    public Runnable subscribeChanges(Context context, Runnable onChange) {
        Subscriber subscriber = new Subscriber(context, node -> onChange.run());
        changeSubscribers.add(subscriber);
        return () -> changeSubscribers.remove(subscriber);
    }

    private void notifyLeft(String nodeId) {
        for (Subscriber s : subscribers) {
            s.context.runOnContext(v -> s.onLeft.accept(nodeId));
        }
    }

    /**
     * Calls {@code onLeft} on {@code context} with the id of each node that leaves the cluster,
     * until the returned handle is run.
     */
    public Runnable subscribe(Context context, Consumer<String> onLeft) {
        Subscriber subscriber = new Subscriber(context, onLeft);
        subscribers.add(subscriber);
        return () -> subscribers.remove(subscriber);
    }

    /**
     * This node was removed from the cluster while it ran: the side it was on is merging into the
     * larger side, where every member counted it gone and gave back what it owned. Subscribers hear
     * it once per displacement.
     */
    public void displaced(String why) {
        synchronized (displacementSubscribers) {
            if (displacedBecause != null) {
                return;
            }
            displacedBecause = why;
        }
        log.warn("node {} was displaced: {}", manager.getNodeId(), why);
        for (DisplacementSubscriber s : displacementSubscribers) {
            s.context.runOnContext(v -> s.onDisplaced.accept(why));
        }
    }

    /** This node is a member of the whole cluster again after {@link #displaced}. */
    public void rejoined() {
        synchronized (displacementSubscribers) {
            if (displacedBecause == null) {
                return;
            }
            displacedBecause = null;
        }
        log.info("node {} is a member of the whole cluster again ({} members)", manager.getNodeId(), manager.getNodes().size());
        for (DisplacementSubscriber s : displacementSubscribers) {
            s.context.runOnContext(v -> s.onRejoined.run());
        }
    }

    /** Why this node is displaced now, or {@code null} while it is not. */
    public String displacedBecause() {
        return displacedBecause;
    }

    /**
     * Calls {@code onDisplaced} (with why) and {@code onRejoined} on {@code context} each time this
     * node is displaced and comes back, until the returned handle is run.
     */
    public Runnable subscribeDisplacement(Context context, Consumer<String> onDisplaced, Runnable onRejoined) {
        DisplacementSubscriber subscriber = new DisplacementSubscriber(context, onDisplaced, onRejoined);
        displacementSubscribers.add(subscriber);
        return () -> displacementSubscribers.remove(subscriber);
    }

    /** This node's id. */
    public String nodeId() {
        return manager.getNodeId();
    }

    /** The ids of the cluster's members now, but for those that said they are leaving. */
    public Set<String> nodes() {
        Set<String> nodes = new HashSet<>(manager.getNodes());
        nodes.removeAll(leaving);
        return Set.copyOf(nodes);
    }

    /**
     * The nodes that consume at {@code address} for the whole cluster (local-only consumers are
     * not counted), as the cluster's registry holds them now. Completes on {@code context}.
     */
    public Future<List<String>> nodesServing(Context context, String address) {
        Promise<List<String>> promise = Promise.promise();
        manager.getRegistrations(address, (registrations, failure) -> context.runOnContext(v -> {
            if (failure != null) {
                promise.fail(failure);
                return;
            }
            List<String> nodes = new ArrayList<>();
            for (RegistrationInfo r : registrations) {
                if (!r.localOnly() && !nodes.contains(r.nodeId())) {
                    nodes.add(r.nodeId());
                }
            }
            promise.complete(nodes);
        }));
        return promise.future();
    }

    private record DisplacementSubscriber(Context context, Consumer<String> onDisplaced, Runnable onRejoined) {
        @Override
        public boolean equals(Object other) {
            return this == other;
        }

        @Override
        public int hashCode() {
            return System.identityHashCode(this);
        }
    }

    /** A subscription; compared by identity, so that one coordinator's two subscriptions stay apart. */
    private static final class Subscriber {
        final Context context;
        final Consumer<String> onLeft;

        Subscriber(Context context, Consumer<String> onLeft) {
            this.context = context;
            this.onLeft = onLeft;
        }
    }
}
