package io.kvpager.protocol;

import java.util.UUID;
import java.util.concurrent.atomic.AtomicLong;
import java.util.regex.Pattern;

/**
 * One coordinator incarnation: the cluster node it runs on and an epoch unique to that node. A
 * group's tensors on a worker and a pool's GPU share belong to one owner; when the owner's node
 * leaves the cluster, whatever it owned is given back. A coordinator restarted with the same options
 * is a new owner, so nothing confuses it with the one before.
 *
 * <p>The string form is {@code <nodeId>#<epoch>}: the node id names the cluster member (a random
 * id when the Vert.x is not clustered), the epoch the incarnation on that node.
 */
public record Owner(String nodeId, long epoch) {

    private static final Pattern NODE_ID = Pattern.compile("[A-Za-z0-9._:-]{1,128}");
    private static final AtomicLong EPOCHS = new AtomicLong(System.currentTimeMillis() * 1000);
    /** Stands for this process's node when its Vert.x is not clustered. */
    private static final String LOCAL_NODE = "local-" + UUID.randomUUID();

    public Owner {
        if (nodeId == null || !NODE_ID.matcher(nodeId).matches()) {
            throw new IllegalArgumentException("an owner's node id must match " + NODE_ID + ", got " + nodeId);
        }
        if (epoch < 0) {
            throw new IllegalArgumentException("an owner's epoch must be 0 or more, got " + epoch);
        }
    }

    /**
     * A new incarnation on the node {@code clusterNodeId}, or on this process's own node id when it
     * is null (a Vert.x that is not clustered).
     */
    public static Owner next(String clusterNodeId) {
        return new Owner(clusterNodeId == null ? LOCAL_NODE : clusterNodeId, EPOCHS.incrementAndGet());
    }

    /** Reads the string form {@code <nodeId>#<epoch>}; a clear {@link IllegalArgumentException} otherwise. */
    public static Owner parse(String text) {
        int hash = text == null ? -1 : text.lastIndexOf('#');
        if (hash <= 0 || hash == text.length() - 1) {
            throw new IllegalArgumentException("an owner is <nodeId>#<epoch>, got " + text);
        }
        try {
            return new Owner(text.substring(0, hash), Long.parseLong(text.substring(hash + 1)));
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException("an owner's epoch must be a whole number, got " + text);
        }
    }

    /** Whether this owner's node is {@code nodeId}. */
    public boolean isOn(String nodeId) {
        return this.nodeId.equals(nodeId);
    }

    @Override
    public String toString() {
        return nodeId + "#" + epoch;
    }
}
