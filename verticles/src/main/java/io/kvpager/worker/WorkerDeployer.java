package io.kvpager.worker;

import io.vertx.core.Future;
import io.vertx.core.Vertx;

/**
 * What {@link RankWorker#deploy} deploys a rank worker with. kvpager-verticles provides the one
 * implementation, found through {@link java.util.ServiceLoader} ({@code META-INF/services}), so
 * that this API names no class of {@code io.kvpager.impl}: the implementation depends on the API,
 * never the other way round. Applications call {@link RankWorker#deploy}, not this.
 */
public interface WorkerDeployer {

    /**
     * Deploys the worker verticle for {@code options} (already validated) and the node's duties
     * that come with a worker; the deployment's id.
     */
    Future<String> deploy(Vertx vertx, RankWorkerOptions options);
}
