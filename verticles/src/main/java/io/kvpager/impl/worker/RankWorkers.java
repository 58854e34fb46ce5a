package io.kvpager.impl.worker;

import io.vertx.core.DeploymentOptions;
import io.vertx.core.Future;
import io.vertx.core.ThreadingModel;
import io.vertx.core.Vertx;

import java.util.Objects;

/**
 * Deploys rank workers the only way they may run: as a worker verticle on a pool of exactly one
 * thread named after the GPU and rank, so that the device context, every handler and every
 * driver call stay on that thread.
 *
 * <p>Workers of several instances that serve the same GPU and rank share that pool and its
 * thread; the driver calls of one GPU gain nothing from more threads, and their contexts stay
 * current on the one thread that made them.
 */
public final class RankWorkers {

    private RankWorkers() {
    }

    /**
     * Deploys the worker for {@code config}'s rank.
     *
     * @return the deployment id, or a failure when the config is invalid or the device does not open
     */
    public static Future<String> deploy(Vertx vertx, WorkerConfig config) {
        return deploy(vertx, config, NodeDepartures.NONE);
    }

    /** Deploys the worker for {@code config}'s rank, following {@code departures} for its owners' leases. */
    public static Future<String> deploy(Vertx vertx, WorkerConfig config, NodeDepartures departures) {
        Objects.requireNonNull(departures, "departures");
        return deploy(vertx, config, DeviceSource.FACTORY, departures);
    }

    static Future<String> deploy(Vertx vertx, WorkerConfig config, DeviceSource source) {
        return deploy(vertx, config, source, NodeDepartures.NONE);
    }

    /** Deploys a worker whose device comes from {@code source}; for tests that watch the device. */
    static Future<String> deploy(Vertx vertx, WorkerConfig config, DeviceSource source, NodeDepartures departures) {
        Objects.requireNonNull(vertx, "vertx");
        Objects.requireNonNull(config, "config");
        Objects.requireNonNull(source, "source");
        return vertx.deployVerticle(new RankWorkerVerticle(source, departures), deploymentOptions(config));
    }

    /**
     * The options a worker must be deployed with: worker threading model, a pool of one thread
     * named {@link WorkerConfig#workerPoolName()}, one instance, the config as JSON. For
     * deploying {@link RankWorkerVerticle} by class name.
     */
    public static DeploymentOptions deploymentOptions(WorkerConfig config) {
        return new DeploymentOptions()
                .setThreadingModel(ThreadingModel.WORKER)
                .setWorkerPoolName(config.workerPoolName())
                .setWorkerPoolSize(1)
                .setInstances(1)
                .setConfig(config.toJson());
    }
}
