package io.kvpager.cluster;

import com.hazelcast.config.Config;
import com.hazelcast.config.ListenerConfig;
import com.hazelcast.core.HazelcastInstance;
import com.hazelcast.core.HazelcastInstanceAware;
import com.hazelcast.core.LifecycleEvent;
import com.hazelcast.core.LifecycleListener;
import com.hazelcast.logging.LogEvent;
import com.hazelcast.logging.LogListener;

import java.util.List;
import java.util.Set;
import java.util.concurrent.CopyOnWriteArraySet;
import java.util.logging.Level;

/**
 * The members that refused this node's join because they belong to a cluster of another name.
 * Hazelcast does not fail such a join: it logs "the target cluster has a different cluster-name",
 * and the node forms a cluster of its own, where it would serve, invisible to the cluster it was
 * meant for. That log record is its only notice (its join protocol does not say which name the
 * other cluster has), so this listens to the member's own log records from before the join on:
 * it is registered through the member's config, which hands it the instance before it joins.
 */
final class ForeignMembers implements LifecycleListener, HazelcastInstanceAware, LogListener {

    /** What Hazelcast's warning says, after the address of the member that refused the join. */
    static final String REFUSAL = "the target cluster has a different cluster-name";
    private static final String AT_NODE = "could not join cluster at node: ";

    private final Set<String> refusedBy = new CopyOnWriteArraySet<>();

    private ForeignMembers() {
    }

    /** A listener registered in {@code config}, to read once the member has started. */
    static ForeignMembers listenTo(Config config) {
        ForeignMembers members = new ForeignMembers();
        config.addListenerConfig(new ListenerConfig(members));
        return members;
    }

    @Override
    public void setHazelcastInstance(HazelcastInstance instance) {
        instance.getLoggingService().addLogListener(Level.WARNING, this);
    }

    @Override
    public void stateChanged(LifecycleEvent event) {
        // registered as a lifecycle listener only to be handed the instance before the join
    }

    @Override
    public void log(LogEvent event) {
        String message = event.getLogRecord().getMessage();
        int at = message == null ? -1 : message.indexOf(AT_NODE);
        if (at < 0 || !message.contains(REFUSAL)) {
            return;
        }
        int from = at + AT_NODE.length();
        int end = message.indexOf(' ', from);
        refusedBy.add((end < 0 ? message.substring(from) : message.substring(from, end)).replace("[", "").replace("]", ""));
    }

    /**
     * The members ({@code ip:port}) that refused the join for another cluster name, when the node
     * is alone in its cluster; empty when it joined one, or when nobody refused it (the first node
     * of a cluster, or members that are not up).
     */
    List<String> refusedAlone(HazelcastInstance instance) {
        if (instance.getCluster().getMembers().size() != 1) {
            return List.of();
        }
        return refusedBy.stream().sorted().toList();
    }
}
