package io.kvpager.impl.broker;

import io.kvpager.internal.books.SealedBooks;
import io.kvpager.internal.membership.ClusterMembership;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.internal.VertxInternal;
import io.vertx.core.shareddata.AsyncMap;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.WeakHashMap;
import java.util.function.Supplier;

/**
 * Gives back the GPU shares of owners whose node left the cluster: a coordinator killed with its
 * process cannot give back what it took, so every node that survives removes the shares of owners
 * on the departed node from every GPU's record. Several survivors doing it at once remove them
 * exactly once: the removal is a compare-and-set of the GPU's record, keyed by pool and owner, so
 * the first survivor's write removes them and the others find nothing left to remove.
 *
 * <p>Coordinators watch from the first GPU broker they open, rank workers from their start, so the
 * shares come back even when no coordinator survives.
 *
 * <p>A notice can come late: the cluster manager tells of a member's removal only after its own
 * bookkeeping in the cluster's maps, and a node cut off from the others (its own pause, a
 * partition) hears of their removal while its side merges back. So each record is judged on who
 * is a member right after it is read: a node back in the cluster by then keeps its owners' shares
 * (a displaced incarnation's share goes with {@link ShareReconcile}, on its own node).
 */
public final class DepartedShares {

    private static final Logger log = LoggerFactory.getLogger(DepartedShares.class);
    /** The memberships watched already, one watch per cluster node; weak, as the membership is. */
    private static final Map<ClusterMembership, Boolean> WATCHED = Collections.synchronizedMap(new WeakHashMap<>());

    private DepartedShares() {
    }

    /** Has this node remove the shares of every node that leaves {@code vertx}'s cluster; once per node, and nothing when not clustered. */
    public static void watch(Vertx vertx) {
        ClusterMembership membership = ClusterMembership.of(vertx);
        if (membership != null) {
            watch(vertx, membership);
        }
    }

    static void watch(Vertx vertx, ClusterMembership membership) {
        if (WATCHED.putIfAbsent(membership, Boolean.TRUE) != null) {
            return;
        }
        // a context of its own: the notices outlive any one verticle of the node
        membership.subscribe(((VertxInternal) vertx).createEventLoopContext(), node -> removeNode(vertx, node, membership::nodes)
                .onFailure(e -> log.warn("node {} left the cluster, but removing its GPU shares failed: {}; the next broker opened on"
                        + " each GPU removes them", node, e.getMessage())));
    }

    /**
     * Removes the shares of every owner on {@code nodeId} from every GPU's record, where the node is
     * not among {@code membersNow} (the cluster's nodes, asked after each read of a record);
     * completes with the bytes this call removed (0 when another node removed them first, or the
     * node is a member again).
     */
    public static Future<Long> removeNode(Vertx vertx, String nodeId, Supplier<Set<String>> membersNow) {
        return SealedBooks.keptText(vertx, GpuBroker.SHARES).compose(shares -> shares.keys().compose(gpus -> {
            List<Future<GpuShares>> removed = new ArrayList<>(gpus.size());
            for (String gpu : gpus) {
                removed.add(GpuBroker.ofRecord(gpu, shares).removeDeparted(owner -> owner.isOn(nodeId)
                        && !membersNow.get().contains(nodeId)));
            }
            return Future.all(removed).map(all -> {
                long bytes = 0;
                for (Future<GpuShares> gpu : removed) {
                    bytes += gpu.result().total();
                }
                return bytes;
            });
        }));
    }
}
