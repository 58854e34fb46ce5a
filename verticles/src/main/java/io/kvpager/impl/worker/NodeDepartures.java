package io.kvpager.impl.worker;

import io.vertx.core.Context;

import java.util.function.Consumer;

/**
 * How a rank worker learns that a cluster node left, so that the groups its coordinator owned
 * lapse: handed to the worker by whoever deploys it ({@link io.kvpager.worker.RankWorker#deploy}
 * hands it the cluster's membership), so that the worker itself knows nothing of the cluster.
 */
public interface NodeDepartures {

    /** No cluster: nobody ever leaves, and nobody is missing. */
    NodeDepartures NONE = new NodeDepartures() {
        @Override
        public Runnable subscribe(Context context, Consumer<String> onLeft) {
            return () -> {
            };
        }

        @Override
        public boolean present(String nodeId) {
            return true;
        }
    };

    /**
     * Calls {@code onLeft} on {@code context} with the id of each node that leaves from now on.
     *
     * @return what stops the calls
     */
    Runnable subscribe(Context context, Consumer<String> onLeft);

    /** Whether node {@code nodeId} is in the cluster now (always, outside a cluster). */
    boolean present(String nodeId);
}
