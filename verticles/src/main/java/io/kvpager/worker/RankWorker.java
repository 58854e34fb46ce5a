package io.kvpager.worker;

import io.kvpager.protocol.WorkerProtocol;
import io.vertx.core.Future;
import io.vertx.core.Vertx;

import java.util.Objects;
import java.util.ServiceLoader;

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
    private final RankWorkerOptions options;
    private final String deploymentId;

    private RankWorker(Vertx vertx, RankWorkerOptions options, String deploymentId) {
        this.vertx = vertx;
        this.options = options;
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
        RankWorkerOptions checked;
        try {
            checked = new RankWorkerOptions(options).validate();
        } catch (IllegalArgumentException e) {
            return Future.failedFuture(e);
        }
        WorkerDeployer deployer = ServiceLoader.load(WorkerDeployer.class, RankWorker.class.getClassLoader()).findFirst()
                .orElseThrow(() -> new IllegalStateException("no " + WorkerDeployer.class.getName()
                        + " on the class path: a jar that merges kvpager-verticles must keep its META-INF/services"));
        return deployer.deploy(vertx, checked).map(id -> new RankWorker(vertx, checked, id));
    }

    /** The event-bus address of rank {@code (pp, tp)} of {@code instance}: {@code kvpager.<instance>.pp<P>.tp<R>}. */
    public static String address(String instance, int pp, int tp) {
        return WorkerProtocol.rankAddress(instance, pp, tp);
    }

    /** The Vert.x deployment id of the worker's verticle. */
    public String deploymentId() {
        return deploymentId;
    }

    /** The options it was deployed with (a copy). */
    public RankWorkerOptions options() {
        return new RankWorkerOptions(options);
    }

    /** The rank as messages and stats name it: {@code pp0/tp1}. */
    public String rank() {
        return "pp" + options.getPp() + "/tp" + options.getTp();
    }

    /** Where the worker answers: {@code kvpager.<instance>.pp<P>.tp<R>}. */
    public String address() {
        return address(options.getInstance(), options.getPp(), options.getTp());
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
        return "RankWorker[" + rank() + " of " + options.getInstance() + ", " + deploymentId + "]";
    }
}
