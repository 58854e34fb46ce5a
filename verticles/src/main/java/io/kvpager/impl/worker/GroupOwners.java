package io.kvpager.impl.worker;

import io.kvpager.protocol.Owner;
import io.vertx.core.Context;
import io.vertx.core.Vertx;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.LinkedHashSet;
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
    /**
     * Owners that lost a group here to a newer owner's claim, the latest {@value #RETIRED_KEPT}:
     * such an owner is a displaced coordinator, and never gets a group back. (An owner whose lease
     * ended may claim again: its node was only cut off, and nobody took its place.)
     */
    private final Set<Owner> retired = new LinkedHashSet<>();
    private static final int RETIRED_KEPT = 256;
    private final NodeDepartures departures;
    private Runnable unsubscribe;

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
    }

    /** The owner of {@code group}, or null when it has none here. */
    Owner owner(int group) {
        return owners.get(group);
    }

    /** {@code owner} holds {@code group} from now on; a lapsing lease of the previous owner is cancelled. */
    void claim(int group, Owner owner) {
        Owner previous = owners.put(group, owner);
        if (!owner.equals(previous)) {
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
        if (retired.size() > RETIRED_KEPT) {
            retired.remove(retired.iterator().next());
        }
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
        long timer = vertx.setTimer(Math.max(1, graceMs), id -> {
            lapsing.remove(group);
            if (owner.equals(owners.get(group))) {
                expired.accept(group, owner);
            }
        });
        lapsing.put(group, timer);
    }

    private void cancel(int group) {
        Long timer = lapsing.remove(group);
        if (timer != null) {
            vertx.cancelTimer(timer);
        }
    }
}
