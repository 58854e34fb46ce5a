package io.kvpager.worker;

import io.kvpager.impl.broker.DepartedShares;
import io.kvpager.internal.membership.ClusterMembership;
import io.kvpager.impl.worker.NodeDepartures;
import io.kvpager.impl.worker.RankWorkers;
import io.kvpager.impl.worker.WorkerConfig;
import io.vertx.core.Context;
import io.vertx.core.Future;
import io.vertx.core.Vertx;

import java.util.Objects;
import java.util.function.Consumer;

/**
 * A deployed rank worker: the verticle that owns one rank's device, pinned to a worker pool of
 * one thread named after its GPU and rank ({@code kvpager-gpu0-pp0-tp1}), answering at its
 * event-bus address. Deploy one per rank with {@link #deploy}; a coordinator anywhere in the
 * Vert.x cluster reaches it at that address.
 *
 * <pre>{@code
 * RankWorker worker = RankWorker.deploy(vertx, new RankWorkerOptions()
 *         .setInstance("llama").setPp(0).setTp(1).setDevice("cuda").setGpu(1)).await();
 * ...
 * worker.undeploy().await();   // unmaps what it holds and gives the device back
 * }</pre>
 */
public final class RankWorker {

    private final Vertx vertx;
    private final WorkerConfig config;
    private final String deploymentId;

    private RankWorker(Vertx vertx, WorkerConfig config, String deploymentId) {
        this.vertx = vertx;
        this.config = config;
        this.deploymentId = deploymentId;
    }

    /**
     * Validates {@code options} and deploys the worker of their rank in {@code vertx}.
     *
     * @return the deployed worker, or a failure when the options are invalid (an
     *     {@link IllegalArgumentException} naming the field) or the device does not open
     */
    public static Future<RankWorker> deploy(Vertx vertx, RankWorkerOptions options) {
        Objects.requireNonNull(vertx, "vertx");
        Objects.requireNonNull(options, "options");
        WorkerConfig config;
        try {
            config = new WorkerConfig(options);
        } catch (IllegalArgumentException e) {
            return Future.failedFuture(e);
        }
        // in a cluster: owners' leases lapse when their node leaves, and a coordinator that dies
        // takes its GPU shares with it only if some node gives them back
        DepartedShares.watch(vertx);
        return RankWorkers.deploy(vertx, config, departures(ClusterMembership.of(vertx)))
                .map(id -> new RankWorker(vertx, config, id));
    }

    /** The cluster's comings and goings as a worker follows them; none outside a cluster. */
    private static NodeDepartures departures(ClusterMembership membership) {
        if (membership == null) {
            return NodeDepartures.NONE;
        }
        return new NodeDepartures() {
            @Override
            public Runnable subscribe(Context context, Consumer<String> onLeft) {
                return membership.subscribe(context, onLeft);
            }

            @Override
            public boolean present(String nodeId) {
                return membership.nodes().contains(nodeId);
            }
        };
    }

    /** The event-bus address of rank {@code (pp, tp)} of {@code instance}: {@code kvpager.<instance>.pp<P>.tp<R>}. */
    public static String address(String instance, int pp, int tp) {
        return WorkerConfig.address(instance, pp, tp);
    }

    /** The Vert.x deployment id of the worker's verticle. */
    public String deploymentId() {
        return deploymentId;
    }

    /** The options it was deployed with (a copy). */
    public RankWorkerOptions options() {
        return config.options();
    }

    /** The rank as messages and stats name it: {@code pp0/tp1}. */
    public String rank() {
        return config.rank();
    }

    /** Where the worker answers: {@code kvpager.<instance>.pp<P>.tp<R>}. */
    public String address() {
        return config.address();
    }

    /**
     * Undeploys the worker: it answers what reaches it meanwhile with 503, unmaps and releases
     * every page and handle it holds, destroys its tensors and closes its device.
     */
    public Future<Void> undeploy() {
        return vertx.undeploy(deploymentId);
    }

    @Override
    public String toString() {
        return "RankWorker[" + rank() + " of " + config.instance() + ", " + deploymentId + "]";
    }
}
