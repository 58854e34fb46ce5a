package io.kvpager.impl.worker;

import io.kvpager.sim.SimOptions;
import io.kvpager.worker.RankWorkerOptions;
import io.vertx.core.json.JsonObject;

import java.util.Map;
import java.util.Objects;

/**
 * The validated, unchangeable {@link RankWorkerOptions} a rank worker runs with, and what follows
 * from them: its rank name, address and worker pool name. Every check is the options' own
 * ({@code OptionRules}); this class adds none.
 */
public final class WorkerConfig {

    /** See {@link RankWorkerOptions#DEFAULT_LEASE_GRACE_MS}. */
    public static final long DEFAULT_LEASE_GRACE_MS = RankWorkerOptions.DEFAULT_LEASE_GRACE_MS;
    /** See {@link RankWorkerOptions#MAX_LEASE_GRACE_MS}. */
    public static final long MAX_LEASE_GRACE_MS = RankWorkerOptions.MAX_LEASE_GRACE_MS;

    private final RankWorkerOptions options;
    private final String instance;
    private final int pp;
    private final int tp;

    /**
     * @throws IllegalArgumentException naming the first missing or bad field
     */
    public WorkerConfig(RankWorkerOptions options) {
        this.options = new RankWorkerOptions(Objects.requireNonNull(options, "options")).validate();
        this.instance = this.options.getInstance();
        this.pp = this.options.getPp();
        this.tp = this.options.getTp();
    }

    /**
     * @throws IllegalArgumentException naming the first bad field
     */
    public WorkerConfig(String instance, int pp, int tp, String device, int gpu, JsonObject sim, Long sendTimeoutMs) {
        this(instance, pp, tp, device, gpu, sim, sendTimeoutMs, null);
    }

    /**
     * @param leaseGraceMs see {@link RankWorkerOptions#setLeaseGraceMs}
     * @throws IllegalArgumentException naming the first bad field
     */
    public WorkerConfig(String instance, int pp, int tp, String device, int gpu, JsonObject sim, Long sendTimeoutMs,
                        Long leaseGraceMs) {
        this(new RankWorkerOptions().setInstance(instance).setPp(pp).setTp(tp).setDevice(device).setGpu(gpu)
                .setSim(sim == null ? SimOptions.defaults() : SimOptions.parse(sim.getMap())).setSendTimeoutMs(sendTimeoutMs).setLeaseGraceMs(leaseGraceMs));
    }

    /** A config without sim options or send timeout. */
    public WorkerConfig(String instance, int pp, int tp, String device, int gpu) {
        this(instance, pp, tp, device, gpu, null, null);
    }

    /**
     * Reads a config from JSON, as {@link RankWorkerOptions#RankWorkerOptions(JsonObject)} does.
     *
     * @throws IllegalArgumentException naming the first unknown, missing, mistyped or out-of-range field
     */
    public WorkerConfig(JsonObject json) {
        this(new RankWorkerOptions(Objects.requireNonNull(json, "json")));
    }

    /** The options (a copy). */
    public RankWorkerOptions options() {
        return new RankWorkerOptions(options);
    }

    public String instance() {
        return instance;
    }

    public int pp() {
        return pp;
    }

    public int tp() {
        return tp;
    }

    /** {@code "sim"} or {@code "cuda"}: the {@link io.kvpager.spi.DeviceFactory} kind to open. */
    public String device() {
        return options.getDevice();
    }

    public int gpu() {
        return options.getGpu();
    }

    /** The sim device's options; the defaults when none were given. */
    public SimOptions sim() {
        return options.getSim();
    }

    /** The options handed to the device factory: the sim options for {@code sim}, none for {@code cuda}. */
    public Map<String, Object> deviceOptions() {
        return "sim".equals(device()) ? options.getSim().toMap() : Map.of();
    }

    /** See {@link RankWorkerOptions#setSendTimeoutMs}. */
    public Long sendTimeoutMs() {
        return options.getSendTimeoutMs();
    }

    /**
     * How long the worker keeps a group after its owner's node left the cluster, so that a new
     * coordinator can claim it first; then the group's pages and handles are released.
     */
    public long leaseGraceMs() {
        return options.getLeaseGraceMs() == null ? DEFAULT_LEASE_GRACE_MS : options.getLeaseGraceMs();
    }

    /** The share of the GPU's memory kvpager may take, in percent: the one set, or the device's default. */
    public int gpuMemoryPercent() {
        Integer set = options.getGpuMemoryPercent();
        if (set != null) {
            return set;
        }
        return "cuda".equals(device()) ? RankWorkerOptions.DEFAULT_CUDA_GPU_MEMORY_PERCENT : 100;
    }

    /**
     * The bytes kvpager may take of a GPU of {@code totalBytes}: all of them at 100 %, otherwise
     * {@link #gpuMemoryPercent()} of them rounded down to whole {@code granularity} (at least 1 byte).
     */
    public long gpuBudgetBytes(long totalBytes, long granularity) {
        int percent = gpuMemoryPercent();
        if (percent == 100) {
            return totalBytes;
        }
        long share = totalBytes / 100 * percent + totalBytes % 100 * percent / 100;
        return Math.max(1, share / granularity * granularity);
    }

    /** The rank as messages name it: {@code pp0/tp1}. */
    public String rank() {
        return "pp" + pp + "/tp" + tp;
    }

    /** The worker's event-bus address: {@code kvpager.<instance>.pp<P>.tp<R>}. */
    public String address() {
        return address(instance, pp, tp);
    }

    /** The event-bus address of rank {@code (pp, tp)} of {@code instance}. */
    public static String address(String instance, int pp, int tp) {
        return io.kvpager.protocol.WorkerProtocol.rankAddress(instance, pp, tp);
    }

    /**
     * The worker pool the rank runs on: {@code kvpager-gpu<G>-pp<P>-tp<R>}. Its one thread is
     * named after it ({@code kvpager-gpu0-pp0-tp1-0}), so a thread dump shows which GPU and
     * rank a stuck driver call belongs to.
     */
    public String workerPoolName() {
        return "kvpager-gpu" + gpu() + "-pp" + pp + "-tp" + tp;
    }

    public JsonObject toJson() {
        return options.toJson();
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof WorkerConfig other && options.equals(other.options);
    }

    @Override
    public int hashCode() {
        return options.hashCode();
    }

    @Override
    public String toString() {
        return toJson().encode();
    }
}
