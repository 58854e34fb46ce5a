package io.kvpager.cluster;

import com.hazelcast.cluster.Address;
import com.hazelcast.cluster.Member;
import com.hazelcast.config.Config;
import com.hazelcast.config.ListenerConfig;
import com.hazelcast.core.LifecycleListener;
import com.hazelcast.config.TopicConfig;
import com.hazelcast.topic.MessageListener;
import io.kvpager.cache.KvCache;
import io.kvpager.cache.KvCacheOptions;
import io.kvpager.internal.books.SealedBooks;
import io.kvpager.internal.membership.ClusterMembership;
import io.kvpager.worker.RankWorker;
import io.kvpager.worker.RankWorkerOptions;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.Vertx;
import io.vertx.core.VertxOptions;
import io.vertx.core.eventbus.EventBusOptions;
import io.vertx.core.internal.ContextInternal;
import io.vertx.core.metrics.MetricsOptions;
import io.vertx.spi.cluster.hazelcast.HazelcastClusterManager;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;

/**
 * One clustered kvpager process: a Vert.x joined to its cluster through the Hazelcast cluster
 * manager, in which rank workers and coordinators run exactly as they do in one process. A
 * coordinator reaches the ranks of other nodes at the same event-bus addresses, and follows the
 * cluster's membership to notice a rank whose process died.
 *
 * <pre>{@code
 * ClusterNode node = ClusterNode.start(new ClusterNodeOptions().setClusterName("llama-prod")
 *         .setMembers(List.of("10.0.0.5:5701"))).await();
 * node.deployWorker(new RankWorkerOptions().setInstance("llama").setPp(0).setTp(1).setDevice("cuda").setGpu(1));
 * }</pre>
 *
 * <p>The node never enables Vert.x HA: kvpager's membership notices take the cluster manager's one
 * node-listener slot.
 */
public final class ClusterNode {

    private static final Logger log = LoggerFactory.getLogger(ClusterNode.class);
    private static final long CLOSE_TIMEOUT_S = 30;
    /** How long closing waits for the node's directory entries to go before it leaves regardless. */
    private static final long LEAVE_DIRECTORY_TIMEOUT_S = 5;
    /** The topic on which a node says it is leaving, once it has stopped what it ran. */
    static final String LEAVING = "kvpager.leaving";
    /**
     * How long closing waits for its leaving to be said before it leaves regardless: publishing
     * normally takes milliseconds, but a member that cannot reach itself or its peers (seen:
     * Hazelcast "Connecting to self!" for a minute) can hold the publishing thread far longer.
     */
    static final long LEAVE_NOTICE_TIMEOUT_MS = 2000;
    /**
     * Hazelcast's system property for waking a member connection's I/O thread through its selector
     * when a frame is written; a node sets it to {@code false} unless it is set already.
     */
    static final String SELECTION_KEY_WAKEUP = "hazelcast.io.selectionKeyWakeupEnabled";

    private final Vertx vertx;
    private final HazelcastClusterManager manager;
    private final ClusterNodeOptions options;
    private final String clusterName;
    private final long startNanos;
    private volatile Future<Void> closing;
    private volatile Consumer<String> leaveNotice;

    private ClusterNode(Vertx vertx, HazelcastClusterManager manager, ClusterNodeOptions options, String clusterName,
                        long startNanos) {
        this.vertx = vertx;
        this.manager = manager;
        this.options = options;
        this.clusterName = clusterName;
        this.startNanos = startNanos;
        this.leaveNotice = id -> manager.getHazelcastInstance().getTopic(LEAVING).publish(id);
    }

    /**
     * Starts a node and joins its cluster. Fails with an {@link IllegalArgumentException} for bad
     * options or unreadable files, with an {@link IllegalStateException} when it came up alone
     * because members it was to join through answered for another cluster name (rather than serve
     * alone, unseen), or with the cluster manager's failure. Reads the config files on the calling
     * thread: call it from a main thread or a worker, not from an event loop.
     */
    public static Future<ClusterNode> start(ClusterNodeOptions options) {
        return start(options, null);
    }

    /**
     * As {@link #start(ClusterNodeOptions)}, with Vert.x metrics (e.g. Micrometer's, for a
     * {@code /metrics} endpoint) when {@code metrics} is not {@code null}.
     */
    public static Future<ClusterNode> start(ClusterNodeOptions options, MetricsOptions metrics) {
        long started = System.nanoTime();
        ClusterNodeOptions checked;
        String clusterName;
        VertxOptions vertxOptions;
        HazelcastClusterManager manager;
        ForeignMembers foreignMembers;
        byte[] bookKey;
        try {
            checked = new ClusterNodeOptions(options).validate();
            clusterName = EventBusTls.clusterName(checked);
            if (System.getProperty("hazelcast.logging.type") == null) {
                // Hazelcast reads its logging type before any config: the property is how to give it
                System.setProperty("hazelcast.logging.type", "slf4j");
            }
            if (System.getProperty(SELECTION_KEY_WAKEUP) == null) {
                // Hazelcast reads it as each member starts its networking (docs/cluster.md, "A pause that split
                // a healthy member off"): a frame written to a member connection goes through the task queue of
                // the connection's I/O thread, not through its selector, which a pipeline spinning on the same
                // thread (seen while a member was paused) keeps from ever running
                System.setProperty(SELECTION_KEY_WAKEUP, "false");
            }
            Config config = MemberConfig.of(checked, clusterName);
            foreignMembers = ForeignMembers.listenTo(config);
            EventBusOptions bus = new EventBusOptions().setHost(checked.getHost()).setPort(checked.getPort());
            if (checked.isTls()) {
                EventBusTls.apply(bus, checked);
            }
            vertxOptions = new VertxOptions().setHAEnabled(false).setEventBusOptions(bus);
            if (metrics != null) {
                vertxOptions.setMetricsOptions(metrics);
            }
            manager = new HazelcastClusterManager(config);
            bookKey = EventBusTls.bookKey(checked);
            if (bookKey != null) {
                // before the join, so that nothing on this node opens the books unsealed
                SealedBooks.keep(manager, bookKey);
            }
            // before the join, so that the listener is in place when the member's threads start
            ClusterMembership membership = ClusterMembership.of(manager);
            config.addTopicConfig(new TopicConfig(LEAVING).addMessageListenerConfig(
                    new ListenerConfig((MessageListener<String>) m -> {
                        Member publisher = m.getPublishingMember();
                        if (publisher != null) {
                            // the master is the oldest member, first in every member's list
                            boolean master = publisher.equals(manager.getHazelcastInstance().getCluster().getMembers().iterator().next());
                            Departures.leaving(publisher.getAddress().getHost(), publisher.getAddress().getPort(), master);
                        }
                        membership.nodeLeaving(m.getMessageObject());
                    })));
            // a member merges only from the smaller side of a split, where the larger side counted it gone
            config.addListenerConfig(new ListenerConfig((LifecycleListener) event -> {
                switch (event.getState()) {
                    case MERGING -> membership.displaced("the cluster counted this node gone (a pause or a partition longer"
                            + " than the heartbeat timeout) and it is merging back; what it owned was given back");
                    case MERGED -> membership.rejoined();
                    case MERGE_FAILED -> log.warn("node {}: merging back into the cluster failed; Hazelcast tries again",
                            membership.nodeId());
                    default -> {
                    }
                }
            }));
        } catch (RuntimeException e) {
            return Future.failedFuture(e);
        }
        return Vertx.builder().with(vertxOptions).withClusterManager(manager).buildClustered().compose(vertx -> {
            List<String> foreign = foreignMembers.refusedAlone(manager.getHazelcastInstance());
            if (!foreign.isEmpty()) {
                IllegalStateException refused = new IllegalStateException(foreignCluster(checked, clusterName, foreign));
                return vertx.close().transform(closed -> Future.failedFuture(refused));
            }
            ClusterNode node = new ClusterNode(vertx, manager, checked, clusterName, started);
            // a node that leaves is heard from the member list, not only behind Vert.x's clean-up (ClusterMembership)
            ClusterMembership.of(manager).watchMembers(vertx);
            // every node follows the membership for the directory, so that a survivor removes a dead node's entries
            ClusterDirectory.of(vertx);
            return vertx.executeBlocking(() -> listenForLeaving(manager)).transform(opened -> {
                if (opened.failed()) {
                    return vertx.close().transform(closed -> Future.<ClusterNode>failedFuture(opened.cause()));
                }
                log.info("node {} joined cluster {} as member {} in {} ms (event bus {}:{}{}{})", manager.getNodeId(), clusterName,
                        node.memberAddress(), node.startMillis(),
                        checked.getHost(), checked.getPort() == 0 ? "any" : checked.getPort(), checked.isTls() ? ", TLS" : "",
                        bookKey != null ? ", sealed books" : "");
                return Future.succeededFuture(node);
            });
        });
    }

    /**
     * Opens the {@value #LEAVING} topic on this member now, which registers its listener (the
     * topic's config) with every member. Hazelcast registers a config's listener only where the
     * topic is opened, and a member publishes to the listeners it knows at that moment: opened
     * first by a node as it leaves, the topic's first notice reached no other member, so the first
     * node to leave a cluster after it formed went unheard until the others gave up on its connection.
     */
    private static Void listenForLeaving(HazelcastClusterManager manager) {
        manager.getHazelcastInstance().getTopic(LEAVING);
        return null;
    }

    private static String foreignCluster(ClusterNodeOptions options, String clusterName, List<String> foreign) {
        String name = clusterName.equals(options.getClusterName()) ? "'" + clusterName + "'"
                : "'" + options.getClusterName() + "' (with its secret '" + clusterName + "', the name suffixed with an HMAC of the"
                        + " cluster secret" + (options.isTls() ? " over the trusted certificates' fingerprint)" : ")");
        return "cluster name " + name + " is not the cluster name of the members it joins through: " + String.join(", ", foreign)
                + " answered with another cluster name (Hazelcast: \"" + ForeignMembers.REFUSAL + "\"; it does not say which)."
                + " The node would serve alone in a cluster of its own, so it does not start: give it the cluster name those members"
                + " were started with" + (options.getClusterSecret() != null ? ", the same cluster secret" : "")
                + (options.isTls() ? " and a trust store that vouches for the same certificates" : "");
    }

    public Vertx vertx() {
        return vertx;
    }

    public ClusterNodeOptions options() {
        return new ClusterNodeOptions(options);
    }

    /** The cluster name this node joined under (with a cluster secret, the options' name with an HMAC of the secret). */
    public String clusterName() {
        return clusterName;
    }

    /** This node's id in the cluster. */
    public String nodeId() {
        return manager.getNodeId();
    }

    /** The address other nodes join through: this member's {@code ip:port}. */
    public String memberAddress() {
        com.hazelcast.cluster.Address address = manager.getHazelcastInstance().getCluster().getLocalMember().getAddress();
        return address.getHost() + ":" + address.getPort();
    }

    /** How many members the cluster has now, as this node sees it. */
    public int members() {
        return manager.getNodes().size();
    }

    /** Milliseconds from {@link #start} to the node being in the cluster. */
    public long startMillis() {
        return (System.nanoTime() - startNanos) / 1_000_000;
    }

    /** The cluster's directory of instances and workers, as this node registers in it. */
    public ClusterDirectory directory() {
        return ClusterDirectory.of(vertx);
    }

    /**
     * Deploys a rank worker on this node (see {@link RankWorker#deploy}) and lists it in the
     * {@link ClusterDirectory}, tied to this node.
     */
    public Future<RankWorker> deployWorker(RankWorkerOptions options) {
        return RankWorker.deploy(vertx, options).compose(worker -> {
            RankWorkerOptions deployed = worker.options();
            return directory().registerWorker(deployed.getInstance(), deployed.getPp(), deployed.getTp()).map(worker);
        });
    }

    /**
     * Deploys a cache's coordinator (and its local workers, if asked) on this node (see
     * {@link KvCache#deploy}) and lists its instance in the {@link ClusterDirectory}, tied to this node.
     */
    public Future<KvCache> deployCache(KvCacheOptions options) {
        return KvCache.deploy(vertx, options).compose(cache -> directory().registerCoordinator(options.getInstance()).map(cache));
    }

    /**
     * Leaves the cluster: removes this node's entries from the {@link ClusterDirectory} first,
     * while the cluster can still be reached (for at most 5 s), then undeploys everything (workers
     * answer what reaches them meanwhile with 503 and give their memory back, coordinators destroy
     * their tensors), says on the {@value #LEAVING} topic that it is leaving, so that the others
     * count it gone at once (from a thread of its own, waiting for it at most
     * {@value #LEAVE_NOTICE_TIMEOUT_MS} ms, so that no event loop ever waits on Hazelcast), and
     * closes Vert.x, which leaves the cluster gracefully. Every call answers the first one's future.
     */
    public synchronized Future<Void> close() {
        if (closing == null) {
            long began = System.nanoTime();
            ClusterMembership.of(manager).stopping();
            Address self;
            try {
                self = manager.getHazelcastInstance().getCluster().getLocalMember().getAddress();
                Departures.stopping(self.getHost(), self.getPort());
            } catch (RuntimeException notRunning) {
                // its member already stopped: it logs nothing more about its peers
                self = null;
            }
            Address member = self;
            String id = nodeId();
            closing = directory().leave().timeout(LEAVE_DIRECTORY_TIMEOUT_S, TimeUnit.SECONDS).transform(left -> {
                if (left.failed()) {
                    log.warn("node {}: its directory entries were not removed ({}); the member that sees it leave "
                            + "removes them", id, left.cause().toString());
                }
                // said once what it ran is stopping: a request that reaches it from here on is answered 503
                log.info("node {} leaving cluster {}", id, clusterName);
                List<Future<Void>> undeploying = new ArrayList<>();
                for (String deployment : vertx.deploymentIDs()) {
                    undeploying.add(vertx.undeploy(deployment));
                }
                return Future.join(undeploying);
            }).transform(stopped -> {
                if (stopped.failed()) {
                    log.warn("node {}: stopping what it ran failed: {}", id, stopped.cause().toString());
                }
                return sayLeaving(id);
            }).transform(said -> vertx.close()).andThen(closed -> {
                if (member != null) {
                    Departures.stopped(member.getHost(), member.getPort());
                }
                if (closed.succeeded()) {
                    log.info("node left cluster {} in {} ms", clusterName, (System.nanoTime() - began) / 1_000_000);
                } else {
                    log.warn("node did not leave cluster {} cleanly: {}", clusterName, closed.cause().toString());
                }
            });
        }
        return closing;
    }

    /**
     * Says on the {@value #LEAVING} topic that this node leaves, on a thread of its own: a
     * publish can block (a member that cannot reach its peers), and neither an event loop nor
     * Vert.x's worker pool, which its closing shuts down, may wait on it. Completes, never failing,
     * on the event loop that asked once the notice went out or {@value #LEAVE_NOTICE_TIMEOUT_MS} ms
     * passed, whichever is first; a thread still blocked then ends when the member shuts down.
     */
    private Future<Void> sayLeaving(String id) {
        // a promise of the context: whoever completes it, what follows runs on its event loop; and
        // the thread that completes it late (the bound won, Vert.x may be closed) dispatches nothing
        Promise<Void> said = ((ContextInternal) vertx.getOrCreateContext()).promise();
        long bound = vertx.setTimer(LEAVE_NOTICE_TIMEOUT_MS, t -> {
            if (said.tryComplete()) {
                log.warn("node {} could not say it is leaving within {} ms; it leaves regardless and the others notice it"
                        + " once it has", id, LEAVE_NOTICE_TIMEOUT_MS);
            }
        });
        Consumer<String> notice = leaveNotice;
        Thread.ofPlatform().daemon().name("kvpager-leave-notice").start(() -> {
            try {
                notice.accept(id);
                if (said.tryComplete()) {
                    vertx.cancelTimer(bound);
                }
            } catch (RuntimeException e) {
                if (said.tryComplete()) {
                    vertx.cancelTimer(bound);
                    log.warn("node {} could not say it is leaving; the others notice it once it has: {}", id, e.toString());
                }
            }
        });
        return said.future();
    }

    /** Replaces how this node says it leaves (tests: a notice that never goes out). */
    void leaveNotice(Consumer<String> notice) {
        this.leaveNotice = notice;
    }

    /** Closes the node when the JVM is asked to stop (SIGTERM, Ctrl-C), waiting for it up to 30 s. */
    public ClusterNode closeOnShutdown() {
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            try {
                close().await(CLOSE_TIMEOUT_S, TimeUnit.SECONDS);
            } catch (Exception e) {
                log.warn("node did not leave the cluster cleanly: {}", e.toString());
            }
        }, "kvpager-node-shutdown"));
        return this;
    }

    @Override
    public String toString() {
        return "ClusterNode[" + clusterName + " " + options.getHost() + "]";
    }
}
