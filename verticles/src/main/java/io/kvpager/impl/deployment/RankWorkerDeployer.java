package io.kvpager.impl.deployment;

import io.kvpager.impl.broker.DepartedShares;
import io.kvpager.impl.worker.NodeDepartures;
import io.kvpager.impl.worker.RankWorkers;
import io.kvpager.impl.worker.WorkerConfig;
import io.kvpager.internal.membership.ClusterMembership;
import io.kvpager.worker.RankWorker;
import io.kvpager.worker.RankWorkerOptions;
import io.kvpager.worker.WorkerDeployer;
import io.vertx.core.Context;
import io.vertx.core.Future;
import io.vertx.core.Vertx;

import java.util.function.Consumer;

/**
 * The deployment behind {@link RankWorker#deploy}, named in {@code META-INF/services}: the worker
 * verticle, handed the cluster's membership, and the node's give-back of departed owners' GPU
 * shares. It sits above the worker and the broker so that neither reaches the other.
 */
public final class RankWorkerDeployer implements WorkerDeployer {

    @Override
    public Future<String> deploy(Vertx vertx, RankWorkerOptions options) {
        WorkerConfig config;
        try {
            config = new WorkerConfig(options);
        } catch (IllegalArgumentException e) {
            return Future.failedFuture(e);
        }
        // in a cluster: owners' leases lapse when their node leaves, and a coordinator that dies
        // takes its GPU shares with it only if some node gives them back
        DepartedShares.watch(vertx);
        return RankWorkers.deploy(vertx, config, departures(ClusterMembership.of(vertx)));
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
}
