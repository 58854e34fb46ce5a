package io.kvpager.harness;

import io.kvpager.sim.FaultPlan;
import io.kvpager.sim.SimDevice;
import io.kvpager.sim.SimGpu;
import io.kvpager.sim.SimGpus;
import io.kvpager.sim.SimOptions;
import io.kvpager.worker.RankWorker;
import io.kvpager.worker.RankWorkerOptions;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.json.JsonObject;

import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * The rank workers of one pipeline stage ({@code pp0}) on simulated GPUs that belong to this
 * fixture alone: the sim's {@code gpuKey} is the instance name, and rank {@code tpR} runs on GPU
 * {@code R} of that key, so two fixtures never share memory or faults. Deployed by the fixture
 * (a cache on top of them runs without local workers), so that a test can stop a rank and bring it
 * back.
 *
 * <p>Methods that change deployments return futures; the accounting methods may be called from any
 * thread.
 */
public final class SimRanks {

    private final Vertx vertx;
    private final String instance;
    private final SimOptions sim;
    private final String[] deployments;

    private SimRanks(Vertx vertx, String instance, JsonObject sim, int tp) {
        this.vertx = vertx;
        this.instance = instance;
        this.sim = SimOptions.parse(sim.getMap()).withGpuKey(instance);
        this.deployments = new String[tp];
    }

    /**
     * Deploys {@code tp} workers for {@code instance}, all or none.
     *
     * @param sim the sim device options ({@code capacityBytes}, {@code granularity}, ...); the
     *     {@code gpuKey} is set to {@code instance}
     * @throws IllegalArgumentException for sim options {@link SimOptions#parse} refuses
     */
    public static Future<SimRanks> deploy(Vertx vertx, String instance, int tp, JsonObject sim) {
        SimRanks ranks = new SimRanks(vertx, instance, sim, tp);
        List<Future<Void>> all = new ArrayList<>();
        for (int r = 0; r < tp; r++) {
            all.add(ranks.redeploy(r));
        }
        return Future.join(all).transform(joined -> joined.succeeded() ? Future.succeededFuture(ranks)
                : ranks.close().transform(closed -> Future.failedFuture(joined.cause())));
    }

    public String instance() {
        return instance;
    }

    public int tp() {
        return deployments.length;
    }

    /** {@code pp0/tpR}. */
    public String rank(int tp) {
        return "pp0/tp" + tp;
    }

    /** The worker's event-bus address. */
    public String address(int tp) {
        return RankWorker.address(instance, 0, tp);
    }

    /** Whether rank {@code tp}'s worker is deployed now. */
    public synchronized boolean deployed(int tp) {
        return deployments[tp] != null;
    }

    /** Stops rank {@code tp}'s worker: it unmaps and releases everything and closes its device. */
    public Future<Void> undeploy(int tp) {
        String id;
        synchronized (this) {
            id = deployments[tp];
            deployments[tp] = null;
        }
        return id == null ? Future.succeededFuture() : vertx.undeploy(id);
    }

    /** Deploys rank {@code tp}'s worker when it is not deployed: a fresh device on the same simulated GPU. */
    public Future<Void> redeploy(int tp) {
        if (deployed(tp)) {
            return Future.succeededFuture();
        }
        RankWorkerOptions options = new RankWorkerOptions().setInstance(instance).setPp(0).setTp(tp).setGpu(tp).setSim(sim);
        return RankWorker.deploy(vertx, options).map(worker -> {
            synchronized (this) {
                deployments[tp] = worker.deploymentId();
            }
            return null;
        });
    }

    /** The simulated GPU of rank {@code tp}, once a worker has opened it. */
    public SimGpu gpu(int tp) {
        return SimGpus.gpu(instance, tp);
    }

    /** The open device of rank {@code tp}, if its worker runs. */
    public Optional<SimDevice> device(int tp) {
        return SimGpus.find(instance, tp).flatMap(gpu -> gpu.devices().stream().findFirst());
    }

    /** The fault plan of rank {@code tp}'s open device. */
    public FaultPlan faults(int tp) {
        return device(tp).orElseThrow(() -> new IllegalStateException(rank(tp) + " of " + instance + " has no open device"))
                .faults();
    }

    /** Disarms every fault and lets every hanging or delayed call go, on every open device. */
    public void clearFaults() {
        for (int r = 0; r < tp(); r++) {
            device(r).ifPresent(d -> {
                d.faults().clear();
                d.faults().releaseHangs();
                d.faults().releaseDelays();
            });
        }
    }

    /** Whether no call hangs or waits out a delay on any open device: the ranks' threads are free. */
    public boolean quiet() {
        for (int r = 0; r < tp(); r++) {
            Optional<SimDevice> d = device(r);
            if (d.isPresent() && (d.get().faults().hanging() > 0 || d.get().faults().delaying() > 0)) {
                return false;
            }
        }
        return true;
    }

    /**
     * Handles alive and bytes in use on each rank's GPU, in rank order; a GPU no device opened yet
     * holds nothing.
     */
    public List<String> accounting() {
        List<String> out = new ArrayList<>(tp());
        for (int r = 0; r < tp(); r++) {
            Optional<SimGpu> gpu = SimGpus.find(instance, r);
            out.add(rank(r) + ": " + gpu.map(SimGpu::handlesAlive).orElse(0L) + " handles, "
                    + gpu.map(SimGpu::bytesInUse).orElse(0L) + " bytes");
        }
        return out;
    }

    /**
     * What the fixture's GPUs still hold: one line per GPU with an open device, a live handle or
     * bytes in use. Empty after {@link #close()} unless something leaked.
     */
    public List<String> leftOver() {
        List<String> out = new ArrayList<>();
        for (SimGpu gpu : SimGpus.gpus(instance)) {
            if (gpu.hasOpenDevices() || gpu.handlesAlive() != 0 || gpu.bytesInUse() != 0) {
                out.add(gpu.toString());
            }
        }
        return out;
    }

    /** Undeploys every worker still deployed. */
    public Future<Void> close() {
        List<Future<Void>> all = new ArrayList<>();
        for (int r = 0; r < tp(); r++) {
            all.add(undeploy(r));
        }
        return Future.join(all).mapEmpty();
    }

    /** Forgets the fixture's simulated GPUs, once it is closed and they have been checked. */
    public void forgetGpus() {
        SimGpus.reset(instance);
    }
}
