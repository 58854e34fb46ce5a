package io.kvpager.cluster.process;

import io.kvpager.cluster.ClusterNode;
import io.kvpager.cluster.ClusterNodeOptions;
import io.vertx.core.Future;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.TimeUnit;

/**
 * Clusters for tests: each gets a name of its own, so that runs never join each other, and every
 * node binds loopback from a free port up. The test's own JVM starts the first node; spawned
 * nodes join through its member address.
 */
public final class TestClusters {

    private TestClusters() {
    }

    /** A cluster name no other run uses. */
    public static String freshName(String prefix) {
        return prefix + "-" + UUID.randomUUID().toString().substring(0, 8);
    }

    /** A port free on loopback now. */
    public static int freePort() {
        return freePort("127.0.0.1");
    }

    /** A port free on {@code host}, an address of this machine, now. */
    public static int freePort(String host) {
        try (ServerSocket socket = new ServerSocket(0, 1, InetAddress.ofLiteral(host))) {
            return socket.getLocalPort();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** Options for a node of {@code cluster} that joins through {@code join} (its own address for the first node). */
    public static ClusterNodeOptions nodeOptions(String cluster, String join) {
        return nodeOptions(cluster, join, "127.0.0.1");
    }

    /** As {@link #nodeOptions(String, String)}, the node bound to {@code host}. */
    public static ClusterNodeOptions nodeOptions(String cluster, String join, String host) {
        int port = freePort(host);
        return new ClusterNodeOptions().setClusterName(cluster).setHost(host).setMemberPort(port)
                .setMembers(List.of(join == null ? host + ":" + port : join));
    }

    /** Starts the first node of {@code cluster} in this JVM. */
    public static ClusterNode startHere(String cluster) {
        return await(ClusterNode.start(nodeOptions(cluster, null)));
    }

    /** Starts the first node of a cluster in this JVM, with {@code options} (from {@link #nodeOptions}). */
    public static ClusterNode startHere(ClusterNodeOptions options) {
        return await(ClusterNode.start(options));
    }

    /** The spec of a spawned node that joins {@code here}'s cluster and runs {@code workers} and {@code caches}. */
    public static JsonObject spec(ClusterNode here, JsonArray workers, JsonArray caches) {
        return spec(nodeOptions(here.options().getClusterName(), here.memberAddress()), workers, caches);
    }

    /** The spec of a spawned node with {@code node}'s options that runs {@code workers} and {@code caches}. */
    public static JsonObject spec(ClusterNodeOptions node, JsonArray workers, JsonArray caches) {
        return new JsonObject().put("node", node.toJson()).put("workers", workers).put("caches", caches);
    }

    /** Waits for {@code future} from the test's thread, at most a minute. */
    public static <T> T await(Future<T> future) {
        try {
            return future.await(60, TimeUnit.SECONDS);
        } catch (java.util.concurrent.TimeoutException e) {
            throw new IllegalStateException("gave up waiting after a minute", e);
        }
    }

    /**
     * A test's teardown: {@code here} (may be null) leaves first, while the spawned nodes still run,
     * then they are closed. The last member to leave is then a child process, killed if it does not
     * exit in time. (The test JVM's node leaving last, a moment after a worker, was seen with
     * Hazelcast taking the departed worker's address for its own, sending to "this node" and
     * heartbeating "self" every second, and its close did not end within a minute.)
     */
    public static void closeAll(ClusterNode here, List<SpawnedNode> spawned) {
        if (here != null) {
            await(here.close());
        }
        spawned.forEach(SpawnedNode::close);
    }
}
