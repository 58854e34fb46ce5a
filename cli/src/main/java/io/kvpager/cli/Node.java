package io.kvpager.cli;

import io.kvpager.cli.metrics.MetricsEndpoint;
import io.kvpager.cluster.ClusterNode;
import io.kvpager.cluster.ClusterNodeOptions;
import io.vertx.core.Vertx;
import io.vertx.core.VertxOptions;
import java.util.concurrent.TimeUnit;

/**
 * The Vert.x a command runs in: its own, started for the command and closed after it (clustered,
 * when the command joins a cluster), or one that an embedding program (a test, a serving process)
 * already runs its caches in, which the command borrows and leaves running.
 */
final class Node implements AutoCloseable {

    private static final long CLOSE_TIMEOUT_S = 30;
    private static final long JOIN_TIMEOUT_S = 120;

    private final Vertx vertx;
    private final boolean owned;
    private final ClusterNode cluster;

    private Node(Vertx vertx, boolean owned, ClusterNode cluster) {
        this.vertx = vertx;
        this.owned = owned;
        this.cluster = cluster;
    }

    private Node(Vertx vertx, boolean owned) {
        this(vertx, owned, null);
    }

    /**
     * A node of its own that joins the cluster {@code options} describe; waits for it up to two minutes.
     *
     * @throws IllegalArgumentException for bad options; IllegalStateException when it cannot join
     */
    static Node join(ClusterNodeOptions options) {
        return join(options, false);
    }

    /** As {@link #join(ClusterNodeOptions)}, with Micrometer metrics for a {@code /metrics} endpoint when {@code metrics}. */
    static Node join(ClusterNodeOptions options, boolean metrics) {
        try {
            ClusterNode node = ClusterNode.start(options, metrics ? MetricsEndpoint.metricsOptions() : null)
                    .await(JOIN_TIMEOUT_S, TimeUnit.SECONDS);
            return new Node(node.vertx(), true, node);
        } catch (java.util.concurrent.TimeoutException e) {
            throw new IllegalStateException("could not join " + options.getClusterName() + " within " + JOIN_TIMEOUT_S + " s", e);
        } catch (RuntimeException e) {
            throw portInUse(options, e);
        }
    }

    /** A start that failed binding the event bus's port says which port and which flag; any other failure as it is. */
    static RuntimeException portInUse(ClusterNodeOptions options, RuntimeException failure) {
        for (Throwable cause = failure; cause != null; cause = cause.getCause()) {
            if (cause instanceof java.net.BindException && options.getPort() != 0) {
                return new IllegalStateException("--cluster-port " + options.getPort() + " on " + options.getHost()
                        + " is in use (the event bus binds it): choose a free port, or 0 for any", failure);
            }
        }
        return failure;
    }

    static Node start(VertxOptions options) {
        return new Node(Vertx.vertx(options), true);
    }

    static Node borrow(Vertx vertx) {
        return new Node(vertx, false);
    }

    Vertx vertx() {
        return vertx;
    }

    /** The cluster node, or {@code null} when this node is not clustered. */
    ClusterNode cluster() {
        return cluster;
    }

    @Override
    public void close() {
        if (owned) {
            try {
                (cluster != null ? cluster.close() : vertx.close()).await(CLOSE_TIMEOUT_S, TimeUnit.SECONDS);
            } catch (Exception e) {
                throw new IllegalStateException("Vert.x did not close within " + CLOSE_TIMEOUT_S + " s: " + OneLine.of(e), e);
            }
        }
    }
}
