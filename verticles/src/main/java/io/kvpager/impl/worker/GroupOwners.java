package io.kvpager.impl.worker;

import io.kvpager.protocol.Owner;
import io.vertx.core.Context;
import io.vertx.core.Vertx;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.function.BiConsumer;

/**
 * Who owns each group's tensors on one rank, and the lease each owner holds on them. A group
 * belongs to the coordinator incarnation ({@link Owner}) whose {@code create-tensors} made or last
 * claimed it. The lease lasts as long as the owner's node is in the cluster: once the node leaves
 * (crash or stop), the group is handed to {@code expired} after the grace period, unless a new
 * owner claims it first. A group claimed by an owner whose node is already gone gets the same grace.
 *
 * <p>Without a cluster there is no membership to follow, and a group stays with its owner until
 * it is destroyed or claimed. Confined to the rank's context, where the notices and timers run.
 */
final class GroupOwners {

    private static final Logger LOG = LoggerFactory.getLogger(GroupOwners.class);

    private final Vertx vertx;
    private final Context context;
    private final String rank;
    private final long graceMs;
    private final BiConsumer<Integer, Owner> expired;
    private final Map<Integer, Owner> owners = new TreeMap<>();
    /** Groups whose owner's node left: the timer that ends their lease. */
    private final Map<Integer, Long> lapsing = new HashMap<>();
    /** Groups whose owner's node left: when ({@link System#nanoTime}) their lease ends. */
    private final Map<Integer, Long> lapseEnds = new HashMap<>();
    /**
     * Owners that lost a group here to a newer owner's claim, the latest {@value #RETIRED_KEPT}:
     * such an owner is a displaced coordinator, and never gets a group back. (An owner whose lease
     * ended may claim again: its node was only cut off, and nobody took its place.)
     */
    private final Set<Owner> retired = Collections.newSetFromMap(latest(RETIRED_KEPT));
    private static final int RETIRED_KEPT = 256;
    /**
     * Per group and node, the newest owner epoch that claimed the group here, the latest
     * {@value #RETIRED_KEPT}: a node's coordinator incarnations have rising epochs, and an older one
     * (displaced, its start or rejoin still running) never takes the group from a newer one, even
     * when the group lapsed between them.
     */
    private final Map<GroupOnNode, Long> newest = latest(RETIRED_KEPT);
    private final NodeDepartures departures;
    private Runnable unsubscribe;

    /** A group as claimed by the coordinator incarnations of one node. */
    private record GroupOnNode(int group, String nodeId) {
    }

    /**
     * @param rank the rank's name for log lines
     * @param graceMs how long a group outlives its owner's node
     * @param expired called on the context with a group and its owner when the lease ended and nobody claimed it
     * @param departures the nodes that leave the cluster ({@link NodeDepartures#NONE} outside one)
     */
    GroupOwners(Vertx vertx, Context context, String rank, long graceMs, BiConsumer<Integer, Owner> expired,
                NodeDepartures departures) {
        this.vertx = vertx;
        this.departures = departures;
        this.context = context;
        this.rank = rank;
        this.graceMs = graceMs;
        this.expired = expired;
    }

    /** Follows the nodes that leave the cluster. */
    void start() {
        unsubscribe = departures.subscribe(context, this::nodeLeft);
    }

    /** Stops following the membership and ends no more leases. */
    void stop() {
        if (unsubscribe != null) {
            unsubscribe.run();
            unsubscribe = null;
        }
        lapsing.values().forEach(vertx::cancelTimer);
        lapsing.clear();
        lapseEnds.clear();
    }

    /** The owner of {@code group}, or null when it has none here. */
    Owner owner(int group) {
        return owners.get(group);
    }

    /**
     * {@code owner} holds {@code group} from now on; a lapsing lease of the previous owner is
     * cancelled, and so is the owner's own when its node is a member again: a node that this rank
     * saw leave was only cut off from it (this rank's own pause, a partition), and an owner that
     * claims its group again once they see each other renews its lease rather than losing its group
     * to a timer that no longer means anything.
     */
    void claim(int group, Owner owner) {
        newest.merge(new GroupOnNode(group, owner.nodeId()), owner.epoch(), Math::max);
        Owner previous = owners.put(group, owner);
        if (!owner.equals(previous) || departures.present(owner.nodeId())) {
            cancel(group);
        }
        if (!departures.present(owner.nodeId())) {
            lapse(group, owner, "its node " + owner.nodeId() + " is not in the cluster");
        }
    }

    /**
     * {@code owner} lost a group here to a newer owner's claim: a create-tensors of its own would
     * take the group back from that owner.
     */
    void retire(Owner owner) {
        retired.add(owner);
    }

    /** The newest epoch of {@code owner}'s node that claimed {@code group} here, when newer than {@code owner}'s; -1 otherwise. */
    long supersededBy(int group, Owner owner) {
        Long epoch = newest.get(new GroupOnNode(group, owner.nodeId()));
        return epoch != null && epoch > owner.epoch() ? epoch : -1;
    }

    /** Whether {@code owner} lost a group here: see {@link #retire}. */
    boolean retired(Owner owner) {
        return retired.contains(owner);
    }

    /** {@code group} is gone: no owner, no lease. */
    void forget(int group) {
        owners.remove(group);
        cancel(group);
    }

    /** Whether the lease on {@code group} is lapsing: its owner's node left, and the grace has not ended. */
    boolean isLapsing(int group) {
        return lapsing.containsKey(group);
    }

    /**
     * How long, at least, from now the owner of {@code group} keeps it here: the whole grace while
     * its node is a member (the grace only starts once this rank sees the node leave), what is left
     * of it while the lease lapses; {@code -1} outside a cluster, where no lease ends. A newer
     * owner's create-tensors can still claim the group sooner: that owner fences the one before.
     */
    long leaseMs(int group) {
        if (departures == NodeDepartures.NONE) {
            return -1;
        }
        Long ends = lapseEnds.get(group);
        if (ends == null) {
            return graceMs;
        }
        return Math.max(0, (ends - System.nanoTime()) / 1_000_000);
    }

    /** How many groups wait for their grace period to end. */
    int lapsing() {
        return lapsing.size();
    }

    private void nodeLeft(String nodeId) {
        List<Map.Entry<Integer, Owner>> gone = new ArrayList<>();
        for (Map.Entry<Integer, Owner> entry : owners.entrySet()) {
            if (entry.getValue().isOn(nodeId)) {
                gone.add(entry);
            }
        }
        for (Map.Entry<Integer, Owner> entry : gone) {
            lapse(entry.getKey(), entry.getValue(), "its node left the cluster");
        }
    }

    private void lapse(int group, Owner owner, String why) {
        if (lapsing.containsKey(group)) {
            return;
        }
        LOG.info("{} group {}: owner {} lost its lease ({}); released in {} ms unless a new owner claims it", rank, group,
                owner, why, graceMs);
        lapseEnds.put(group, System.nanoTime() + graceMs * 1_000_000);
        long timer = vertx.setTimer(Math.max(1, graceMs), id -> {
            lapsing.remove(group);
            lapseEnds.remove(group);
            if (owner.equals(owners.get(group))) {
                expired.accept(group, owner);
            }
        });
        lapsing.put(group, timer);
    }

    private void cancel(int group) {
        lapseEnds.remove(group);
        Long timer = lapsing.remove(group);
        if (timer != null) {
            vertx.cancelTimer(timer);
        }
    }

    /** A map that keeps the {@code kept} keys first put in it most lately, dropping the oldest beyond them. */
    private static <K, V> Map<K, V> latest(int kept) {
        return new LinkedHashMap<>(16, 0.75f, false) {
            @Override
            protected boolean removeEldestEntry(Map.Entry<K, V> eldest) {
                return size() > kept;
            }
        };
    }
}
