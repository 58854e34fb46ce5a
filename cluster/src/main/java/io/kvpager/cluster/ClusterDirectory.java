package io.kvpager.cluster;

import com.hazelcast.splitbrainprotection.SplitBrainProtectionException;
import io.kvpager.internal.membership.ClusterMembership;
import io.kvpager.internal.membership.ClusterMembership;
import io.vertx.core.Context;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.internal.VertxInternal;
import io.vertx.core.json.JsonObject;
import io.kvpager.internal.books.SealedBooks;
import io.vertx.core.shareddata.AsyncMap;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * Which cache instances are coordinated, and which rank workers serve, anywhere in the cluster,
 * kept in the cluster's shared data (async maps {@value #INSTANCES} and {@value #WORKERS}) so that
 * {@code status} and {@code top} find them without being told. Every entry is tied to the node
 * that registered it: the node removes its own when it closes ({@link #leave()}, before it leaves
 * the cluster), and when a node leaves without doing so (SIGKILL, a crash), one surviving member
 * removes its entries: the member with the smallest node id, by a compare-and-remove of the exact
 * entry, so that each is removed once and an entry registered again meanwhile stays.
 *
 * <p>Without a cluster the maps are the process's own, and there is nobody to leave.
 */
public final class ClusterDirectory {

    private static final Logger log = LoggerFactory.getLogger(ClusterDirectory.class);
    /** Instance name to the node id of its coordinator. */
    public static final String INSTANCES = "kvpager.instances";
    /** One entry per rank worker and node, the worker as JSON ({@link RegisteredWorker}). */
    public static final String WORKERS = "kvpager.workers";
    /** How often an entry the quorum refused is tried again. */
    private static final long RELIST_MS = 1_000;
    /** The node id entries carry when Vert.x is not clustered. */
    static final String LOCAL_NODE = "local";
    /** One per Vert.x, until it closes: it keeps what its node registered. */
    private static final Map<Vertx, ClusterDirectory> DIRECTORIES = new HashMap<>();

    private final Vertx vertx;
    private final ClusterMembership membership;
    /** What this node registered: key to the exact value, per map, so that it removes only its own. */
    private final Map<String, String> ownInstances = new ConcurrentHashMap<>();
    private final Map<String, String> ownWorkers = new ConcurrentHashMap<>();
    /** This node's entries that a side smaller than the quorum refused to list: listed as soon as members join. */
    private final Map<String, String> unlistedInstances = new ConcurrentHashMap<>();
    private final Map<String, String> unlistedWorkers = new ConcurrentHashMap<>();
    /** Whether a retry of the unlisted entries is due: Hazelcast counts a new member toward the quorum a little after it joined. */
    private final AtomicBoolean relistDue = new AtomicBoolean();

    private ClusterDirectory(Vertx vertx) {
        this.vertx = vertx;
        this.membership = ClusterMembership.of(vertx);
    }

    /** The directory as {@code vertx} sees it; the first call on a clustered Vert.x starts following its membership. */
    public static ClusterDirectory of(Vertx vertx) {
        synchronized (DIRECTORIES) {
            ClusterDirectory directory = DIRECTORIES.get(vertx);
            if (directory == null) {
                directory = new ClusterDirectory(vertx);
                if (directory.membership != null) {
                    Context context = vertx.getOrCreateContext();
                    ClusterDirectory sweeping = directory;
                    directory.membership.subscribe(context, left -> sweeping.nodeLeft(left));
                    // the larger side of a split removed this node's entries when it counted the node gone
                    directory.membership.subscribeDisplacement(context, why -> { }, sweeping::restoreOwn);
                    directory.membership.subscribeChanges(context, sweeping::listUnlisted);
                }
                DIRECTORIES.put(vertx, directory);
                if (vertx instanceof VertxInternal internal) {
                    internal.addCloseHook(closed -> {
                        synchronized (DIRECTORIES) {
                            DIRECTORIES.remove(vertx);
                        }
                        closed.succeed();
                    });
                }
            }
            return directory;
        }
    }

    /** This node's id in the entries it registers. */
    public String nodeId() {
        return membership == null ? LOCAL_NODE : membership.nodeId();
    }

    /**
     * {@code instance} is coordinated on this node. Where the cluster has fewer members than its
     * quorum ({@link ClusterNodeOptions#setQuorum}), which refuses the write, the entry is listed
     * as soon as enough members have joined, and this answers at once.
     */
    public Future<Void> registerCoordinator(String instance) {
        String node = nodeId();
        return list(instances(), instance, node, ownInstances, unlistedInstances);
    }

    /** Removes {@code instance}'s entry if this node registered it; another node's entry stays. */
    public Future<Void> unregisterCoordinator(String instance) {
        unlistedInstances.remove(instance);
        String node = ownInstances.remove(instance);
        return node == null ? Future.succeededFuture() : instances().compose(m -> m.removeIfPresent(instance, node)).mapEmpty();
    }

    /** A worker for rank {@code (pp, tp)} of {@code instance} serves on this node. */
    public Future<Void> registerWorker(String instance, int pp, int tp) {
        RegisteredWorker worker = new RegisteredWorker(instance, pp, tp, nodeId());
        String value = worker.toJson().encode();
        return list(workers(), worker.key(), value, ownWorkers, unlistedWorkers);
    }

    private Future<Void> list(Future<AsyncMap<String, String>> map, String key, String value, Map<String, String> own,
                              Map<String, String> unlisted) {
        return map.compose(m -> m.put(key, value)).transform(put -> {
            if (put.succeeded()) {
                own.put(key, value);
                return Future.succeededFuture();
            }
            if (!refusedByQuorum(put.cause())) {
                return Future.failedFuture(put.cause());
            }
            own.put(key, value);
            unlisted.put(key, value);
            relistLater();
            log.info("directory: {} is listed once the cluster has as many members as its quorum ({})", key, put.cause().getMessage());
            return Future.succeededFuture();
        });
    }

    /** Lists the entries a quorum refused before, now that a member joined or left. */
    private void listUnlisted() {
        relist(instances(), unlistedInstances, ownInstances);
        relist(workers(), unlistedWorkers, ownWorkers);
    }

    private void relistLater() {
        if (relistDue.compareAndSet(false, true)) {
            vertx.setTimer(RELIST_MS, id -> {
                relistDue.set(false);
                listUnlisted();
            });
        }
    }

    private void relist(Future<AsyncMap<String, String>> map, Map<String, String> unlisted, Map<String, String> own) {
        for (Map.Entry<String, String> entry : Map.copyOf(unlisted).entrySet()) {
            map.compose(m -> m.put(entry.getKey(), entry.getValue())).onSuccess(v -> {
                unlisted.remove(entry.getKey(), entry.getValue());
                if (entry.getValue().equals(own.get(entry.getKey()))) {
                    log.info("directory: {} listed, the cluster having reached its quorum", entry.getKey());
                } else {
                    // unregistered while the write was on its way
                    map.compose(m -> m.removeIfPresent(entry.getKey(), entry.getValue()));
                }
            }).onFailure(e -> {
                if (refusedByQuorum(e)) {
                    relistLater();
                } else {
                    log.warn("directory: listing {} failed: {}", entry.getKey(), e.toString());
                }
            });
        }
    }

    /**
     * The instances this node registered a coordinator or a worker of, sorted: what it can name
     * without reading the cluster's maps (which wait while a member that owns their partitions is
     * paused).
     */
    public List<String> ownInstanceNames() {
        java.util.Set<String> names = new java.util.TreeSet<>(ownInstances.keySet());
        for (String worker : ownWorkers.values()) {
            names.add(RegisteredWorker.fromJson(new JsonObject(worker)).instance());
        }
        return List.copyOf(names);
    }

    /** Every coordinated instance, sorted by name. */
    public Future<List<String>> coordinated() {
        return instances().compose(AsyncMap::keys).map(keys -> keys.stream().sorted().toList());
    }

    /** Every registered worker, by instance, then rank. */
    public Future<List<RegisteredWorker>> registeredWorkers() {
        return workers().compose(AsyncMap::values).map(values -> {
            List<RegisteredWorker> all = new ArrayList<>();
            for (String value : values) {
                all.add(RegisteredWorker.fromJson(new JsonObject(value)));
            }
            all.sort(Comparator.comparing(RegisteredWorker::instance).thenComparingInt(RegisteredWorker::pp)
                    .thenComparingInt(RegisteredWorker::tp).thenComparing(RegisteredWorker::node));
            return all;
        });
    }

    /** The workers whose instance no coordinator serves: ranks that hold a GPU for nobody. */
    public Future<List<RegisteredWorker>> workersWithoutCoordinator() {
        return coordinated().compose(instances -> registeredWorkers().map(workers -> {
            Set<String> coordinated = Set.copyOf(instances);
            return workers.stream().filter(w -> !coordinated.contains(w.instance())).toList();
        }));
    }

    /**
     * Removes every entry this node registered. {@link ClusterNode#close()} calls it before the
     * node leaves the cluster, so that no entry outlives its node.
     */
    public Future<Void> leave() {
        List<Future<Boolean>> removed = new ArrayList<>();
        for (Map.Entry<String, String> own : Map.copyOf(ownInstances).entrySet()) {
            removed.add(instances().compose(m -> m.removeIfPresent(own.getKey(), own.getValue())));
        }
        for (Map.Entry<String, String> own : Map.copyOf(ownWorkers).entrySet()) {
            removed.add(workers().compose(m -> m.removeIfPresent(own.getKey(), own.getValue())));
        }
        ownInstances.clear();
        ownWorkers.clear();
        unlistedInstances.clear();
        unlistedWorkers.clear();
        return Future.join(removed).andThen(done -> {
            long gone = removed.stream().filter(f -> f.succeeded() && f.result()).count();
            if (gone > 0) {
                log.info("directory: node {} removed its {} {} before leaving", nodeId(), gone, gone == 1 ? "entry" : "entries");
            }
        }).mapEmpty();
    }

    /**
     * A node left: every survivor puts its own entries back where they are missing, and the member
     * with the smallest id removes every entry whose node is no longer a member.
     */
    private void nodeLeft(String left) {
        restoreOwn();
        Set<String> members = membership.nodes();
        String sweeper = members.stream().min(String::compareTo).orElse(null);
        if (!nodeId().equals(sweeper)) {
            return;
        }
        sweep(instances(), members, "coordinator of instance ", value -> value);
        sweep(workers(), members, "worker ", value -> RegisteredWorker.fromJson(new JsonObject(value)).node());
        log.debug("node {} left; this node swept the directory", left);
    }

    /**
     * Puts back this node's own entries that are missing. The cluster keeps one backup of each
     * entry (config/cluster.xml), so two members that die at once can take a survivor's entry with
     * them: a coordinator that still serves would then read as gone. An entry another node holds
     * now is left to it.
     *
     * @return how many entries were put back
     */
    Future<Integer> restoreOwn() {
        List<Future<Boolean>> restored = new ArrayList<>();
        for (Map.Entry<String, String> own : Map.copyOf(ownInstances).entrySet()) {
            restored.add(instances().compose(m -> m.putIfAbsent(own.getKey(), own.getValue())).map(before -> before == null));
        }
        for (Map.Entry<String, String> own : Map.copyOf(ownWorkers).entrySet()) {
            restored.add(workers().compose(m -> m.putIfAbsent(own.getKey(), own.getValue())).map(before -> before == null));
        }
        return Future.all(restored).map(all -> {
            int n = (int) restored.stream().filter(Future::result).count();
            if (n > 0) {
                log.warn("directory: node {} put back {} of its entries, lost with members that left", nodeId(), n);
            }
            return n;
        }).onFailure(e -> {
            if (refusedByQuorum(e)) {
                log.info("directory: this node's entries are put back once its side of the cluster has the quorum's members ({})",
                        e.getMessage());
            } else {
                log.warn("directory: putting back this node's entries failed: {}", e.toString());
            }
        });
    }

    private static void sweep(Future<AsyncMap<String, String>> map, Set<String> members, String what,
                              java.util.function.Function<String, String> nodeOf) {
        map.compose(m -> m.entries().compose(entries -> {
            List<Future<?>> removals = new ArrayList<>();
            for (Map.Entry<String, String> entry : entries.entrySet()) {
                String node = nodeOf.apply(entry.getValue());
                if (!members.contains(node)) {
                    removals.add(m.removeIfPresent(entry.getKey(), entry.getValue()).onSuccess(removed -> {
                        if (removed) {
                            log.info("directory: removed the {}{}, whose node {} left the cluster", what, entry.getKey(), node);
                        }
                    }));
                }
            }
            return Future.join(removals);
        })).onFailure(e -> {
            if (refusedByQuorum(e)) {
                log.warn("directory: not removing the entries of nodes that left: this side of the cluster has {} member(s),"
                        + " fewer than the cluster's quorum, so it may be the smaller side of a split; the larger side removes"
                        + " them ({})", members.size(), e.getMessage());
            } else {
                log.warn("directory: removing the entries of nodes that left failed: {}", e.toString());
            }
        });
    }

    /** Whether {@code e} is Hazelcast refusing a write on a side of the cluster smaller than its quorum. */
    static boolean refusedByQuorum(Throwable e) {
        for (Throwable cause = e; cause != null; cause = cause.getCause()) {
            if (cause instanceof SplitBrainProtectionException) {
                return true;
            }
        }
        return false;
    }

    private Future<AsyncMap<String, String>> instances() {
        return SealedBooks.text(vertx, INSTANCES);
    }

    private Future<AsyncMap<String, String>> workers() {
        return SealedBooks.text(vertx, WORKERS);
    }
}
