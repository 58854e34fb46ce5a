package io.kvpager.internal.bus;

import io.vertx.core.Context;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.Vertx;
import io.vertx.core.eventbus.MessageConsumer;
import io.vertx.core.internal.ContextInternal;
import io.vertx.core.internal.VertxInternal;
import io.vertx.core.spi.cluster.ClusterManager;
import io.vertx.core.spi.cluster.NodeInfo;
import io.vertx.core.spi.cluster.RegistrationInfo;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Keeps one event-bus consumer of this node listed in the cluster's registry of consumers for as
 * long as it is registered. The cluster manager removes a node's registrations when it hears that
 * the node left, and that notice can come late: a node cut off from the others (its own pause, a
 * partition) can hear of their removal while its side merges back, after they listed their
 * consumers again, and then removes them from the merged registry. Nothing else puts them back:
 * every message to the address then fails with {@code NO_HANDLERS} while the consumer runs (seen
 * for a minute in a pause soak). So, every {@link #CHECK_MS}, the consumer's own registrations are
 * looked up in the registry and listed again where missing, exactly as the event bus listed them,
 * so that its own removal at unregistration still finds them.
 *
 * <p>The same notice removes the node's entry in the cluster's directory of nodes (where a sender
 * finds the node's event-bus server): a registration listed without that entry is worse than none,
 * since a sender that picks it fails to connect ("Not a member of the cluster") and its message is
 * lost until the sender's timeout, instead of failing at once with {@code NO_HANDLERS}. So each
 * check first puts the node's own entry back where missing, and lists registrations only once the
 * entry is there; a node that is not among the members it sees lists nothing. (A paused worker
 * resumed and merging back once met exactly this: its registrations listed again before its entry,
 * and a request to it timed out after 15 s.)
 *
 * <p>The consumer's registrations are the ones of this node at its address once it is registered:
 * kvpager registers one consumer per address and node (a coordinator's address is checked free
 * first; a rank's address is its own).
 */
public final class KeptRegistration {

    private static final Logger LOG = LoggerFactory.getLogger(KeptRegistration.class);

    /** How often the registry is checked for the consumer's registrations. */
    public static final long CHECK_MS = 2000;

    private final Vertx vertx;
    private final ClusterManager manager;
    private final MessageConsumer<?> consumer;
    private final List<RegistrationInfo> own;
    /**
     * Where the checks run: an event loop of the keeper's own. The cluster manager runs its lookups as
     * blocking tasks of the calling context, and a rank's context is the rank's one thread: there a
     * lookup that waits on Hazelcast during a membership change holds up the rank's requests (its
     * reclaim of a departed owner's pages among them), and one that ended after the rank's stop found
     * its executor shut down (RejectedExecutionException in a stopped worker's output).
     */
    private final Context context;
    private volatile long timer = -1;
    private volatile boolean closed;
    private volatile boolean checking;

    private KeptRegistration(Vertx vertx, Context context, ClusterManager manager, MessageConsumer<?> consumer,
            List<RegistrationInfo> own, long checkMs) {
        this.vertx = vertx;
        this.context = context;
        this.manager = manager;
        this.consumer = consumer;
        this.own = own;
        context.runOnContext(v -> {
            timer = vertx.setPeriodic(checkMs, checkMs, id -> checkHere());
            if (closed) {
                vertx.cancelTimer(timer);
            }
        });
    }

    /**
     * Keeps {@code consumer}, once registered, listed in the registry; completes with the keeper,
     * or with {@code null} outside a cluster (nothing to keep).
     */
    public static Future<KeptRegistration> keep(Vertx vertx, MessageConsumer<?> consumer) {
        return keep(vertx, consumer, CHECK_MS);
    }

    /** {@link #keep(Vertx, MessageConsumer)}, checking every {@code checkMs}. */
    public static Future<KeptRegistration> keep(Vertx vertx, MessageConsumer<?> consumer, long checkMs) {
        if (checkMs <= 0) {
            throw new IllegalArgumentException("the registry is checked every 1 ms or more, not " + checkMs);
        }
        ClusterManager manager = vertx.isClustered() ? ((VertxInternal) vertx).clusterManager() : null;
        if (manager == null) {
            return Future.succeededFuture();
        }
        String nodeId = manager.getNodeId();
        Context context = ((VertxInternal) vertx).createEventLoopContext();
        return consumer.completion().compose(v -> on(vertx, context, () -> registrations(manager, consumer.address()))).map(listed -> {
            List<RegistrationInfo> own = listed.stream().filter(info -> info.nodeId().equals(nodeId)).toList();
            return new KeptRegistration(vertx, context, manager, consumer, own, checkMs);
        });
    }

    /** Runs {@code work} on {@code context}; its outcome comes back on the caller's context. */
    private static <T> Future<T> on(Vertx vertx, Context context, Supplier<Future<T>> work) {
        Promise<T> back = ((ContextInternal) vertx.getOrCreateContext()).promise();
        context.runOnContext(v -> work.get().onComplete(back));
        return back.future();
    }

    /** Stops keeping the consumer: call before it is unregistered. */
    public void close() {
        closed = true;
        long id = timer;
        if (id >= 0) {
            vertx.cancelTimer(id);
        }
    }

    /**
     * Lists the consumer's registrations again where the registry lacks them (one round at a time);
     * completes with how many it listed again.
     */
    public Future<Integer> check() {
        return on(vertx, context, this::checkHere);
    }

    private Future<Integer> checkHere() {
        if (closed || checking || !consumer.isRegistered()) {
            return Future.succeededFuture(0);
        }
        checking = true;
        return nodeListed().compose(listedNode -> !listedNode ? Future.succeededFuture(0)
                : registrations(manager, consumer.address()).compose(this::listMissing))
                .onComplete(ar -> checking = false).otherwise(e -> {
                    // a check still in flight as its node stops fails with the cluster manager: nothing to say then
                    if (!closed) {
                        LOG.warn("checking the cluster's registry for the consumer at {} failed: {}; checked again in {} ms",
                                consumer.address(), e.getMessage(), CHECK_MS);
                    }
                    return 0;
                });
    }

    /**
     * Whether this node's own entry is in the cluster's directory of nodes, put back first if a
     * node that counted this one gone removed it; false when this node is not among the members it
     * sees (leaving, or not joined yet), where nothing is listed.
     */
    private Future<Boolean> nodeListed() {
        String nodeId = manager.getNodeId();
        if (!manager.getNodes().contains(nodeId)) {
            return Future.succeededFuture(false);
        }
        Promise<NodeInfo> found = Promise.promise();
        manager.getNodeInfo(nodeId, found);
        return found.future().map(info -> info != null).otherwise(false).compose(present -> {
            if (present || closed || !consumer.isRegistered()) {
                return Future.succeededFuture(present);
            }
            LOG.info("the cluster's directory of nodes no longer listed this node (removed by a node that counted it gone); listed again");
            Promise<Void> put = Promise.promise();
            manager.setNodeInfo(manager.getNodeInfo(), put);
            return put.future().map(true);
        });
    }

    private Future<Integer> listMissing(List<RegistrationInfo> listed) {
        List<RegistrationInfo> missing = new ArrayList<>(own);
        missing.removeAll(listed);
        if (missing.isEmpty() || closed || !consumer.isRegistered()) {
            return Future.succeededFuture(0);
        }
        LOG.info("the cluster's registry no longer listed this node's consumer at {} (removed by a node that counted"
                + " this one gone); listed again", consumer.address());
        List<Future<Void>> added = new ArrayList<>();
        for (RegistrationInfo info : missing) {
            Promise<Void> done = Promise.promise();
            manager.addRegistration(consumer.address(), info, done);
            added.add(done.future().compose(v -> {
                // unregistered meanwhile: take back what was listed for it
                if (!closed && consumer.isRegistered()) {
                    return Future.succeededFuture();
                }
                Promise<Void> removed = Promise.promise();
                manager.removeRegistration(consumer.address(), info, removed);
                return removed.future();
            }));
        }
        return Future.all(added).map(all -> missing.size());
    }

    private static Future<List<RegistrationInfo>> registrations(ClusterManager manager, String address) {
        Promise<List<RegistrationInfo>> listed = Promise.promise();
        manager.getRegistrations(address, listed);
        return listed.future();
    }
}
