package io.kvpager.worker;

import io.kvpager.internal.options.Option;
import io.kvpager.internal.options.OptionRules;
import io.kvpager.internal.options.OptionTable;
import io.kvpager.sim.SimOptions;
import io.kvpager.internal.options.OptionReader;
import io.kvpager.internal.options.OptionRules;
import io.vertx.codegen.annotations.DataObject;
import io.vertx.core.json.JsonObject;

import static io.kvpager.internal.options.OptionType.INT;
import static io.kvpager.internal.options.OptionType.LONG;
import static io.kvpager.internal.options.OptionType.SIM;
import static io.kvpager.internal.options.OptionType.STRING;

/**
 * What one rank worker serves: the cache instance, its pipeline stage ({@code pp}) and
 * tensor-parallel rank ({@code tp}), the device kind and GPU index, the sim device's options, and
 * how long it keeps the tensors of a coordinator whose node left the cluster.
 *
 * <p>A data object: built fluently in code or from a {@link JsonObject}, written back with
 * {@link #toJson()}. It follows the same rules as {@code KvCacheOptions}: each setter rejects a bad
 * value at once with an {@link IllegalArgumentException} naming the field, the JSON constructor
 * rejects unknown keys and mistyped values, and {@link #validate()} checks the required fields;
 * {@link RankWorker#deploy} calls it.
 *
 * <pre>{@code
 * {"instance": "llama", "pp": 0, "tp": 1, "device": "cuda", "gpu": 1,
 *  "sim": {...}, "sendTimeoutMs": 5000, "leaseGraceMs": 3000, "gpuMemoryPercent": 90}
 * }</pre>
 * {@code device} defaults to {@code sim}, {@code gpu} to 0; {@code sim}, {@code sendTimeoutMs},
 * {@code leaseGraceMs} and {@code gpuMemoryPercent} are optional.
 */
@DataObject
public class RankWorkerOptions {

    public static final String DEFAULT_DEVICE = "sim";
    /** How long a group outlives its owner's node by default: a few seconds, so a restarting coordinator can claim it first. */
    public static final long DEFAULT_LEASE_GRACE_MS = 3_000;
    /** The longest grace taken: an hour. Longer would hold a dead coordinator's GPU memory for no one. */
    public static final long MAX_LEASE_GRACE_MS = 3_600_000;
    /**
     * The share of a CUDA GPU's memory kvpager's caches may take between them by default: the rest
     * holds the CUDA contexts, the kernels' modules and buffers and whatever else the engine keeps
     * on the GPU, none of which kvpager maps or counts.
     */
    public static final int DEFAULT_CUDA_GPU_MEMORY_PERCENT = 90;

    /**
     * Every option: its JSON key and type, its getter and setter (which holds its rule), and what
     * JSON {@code null} does (unsets it, resets {@code sim} to the defaults, or is refused as "required"); the JSON
     * constructor and {@link #toJson()} read this table.
     */
    private static final OptionTable<RankWorkerOptions> OPTIONS = OptionTable.<RankWorkerOptions>of("worker option", OptionTable.REQUIRED)
            .add("instance", STRING, RankWorkerOptions::getInstance, RankWorkerOptions::setInstance)
            .add("pp", INT, RankWorkerOptions::getPp, RankWorkerOptions::setPp)
            .add("tp", INT, RankWorkerOptions::getTp, RankWorkerOptions::setTp)
            .add("device", STRING, RankWorkerOptions::getDevice, RankWorkerOptions::setDevice)
            .add("gpu", INT, RankWorkerOptions::getGpu, RankWorkerOptions::setGpu)
            .add(new Option<>("sim", SIM, RankWorkerOptions::getSim, RankWorkerOptions::setSim, SimOptions::defaults))
            .unsettable("sendTimeoutMs", LONG, RankWorkerOptions::getSendTimeoutMs, RankWorkerOptions::setSendTimeoutMs)
            .unsettable("leaseGraceMs", LONG, RankWorkerOptions::getLeaseGraceMs, RankWorkerOptions::setLeaseGraceMs)
            .unsettable("gpuMemoryPercent", INT, RankWorkerOptions::getGpuMemoryPercent, RankWorkerOptions::setGpuMemoryPercent);

    private String instance;
    private Integer pp;
    private Integer tp;
    private String device = DEFAULT_DEVICE;
    private int gpu;
    private SimOptions sim = SimOptions.defaults();
    private Long sendTimeoutMs;
    private Long leaseGraceMs;
    private Integer gpuMemoryPercent;

    public RankWorkerOptions() {
    }

    public RankWorkerOptions(RankWorkerOptions other) {
        this(other.toJson());
    }

    /**
     * Reads options from JSON; missing keys keep their defaults, JSON {@code null} unsets an
     * optional field ({@code sim}, {@code sendTimeoutMs}, {@code leaseGraceMs}).
     *
     * @throws IllegalArgumentException for an unknown key or a mistyped or out-of-range value, naming it
     */
    public RankWorkerOptions(JsonObject json) {
        OPTIONS.read(this, json);
    }

    /**
     * Checks that the rank is named: {@code instance}, {@code pp} and {@code tp} are required.
     *
     * @return this
     * @throws IllegalArgumentException naming the missing field
     */
    public RankWorkerOptions validate() {
        if (instance == null) {
            throw new IllegalArgumentException("instance is required: the cache's name in event-bus addresses");
        }
        if (pp == null) {
            throw new IllegalArgumentException("pp is required: the rank's pipeline stage");
        }
        if (tp == null) {
            throw new IllegalArgumentException("tp is required: the rank's tensor-parallel index");
        }
        return this;
    }

    public JsonObject toJson() {
        return OPTIONS.toJson(this);
    }

    public String getInstance() {
        return instance;
    }

    /** The cache this rank serves; part of the worker's event-bus address. */
    public RankWorkerOptions setInstance(String instance) {
        this.instance = OptionRules.instanceName("instance", instance);
        return this;
    }

    /** The rank's pipeline stage, or {@code null} while unset. */
    public Integer getPp() {
        return pp;
    }

    /** The rank's pipeline stage, 0 or more; {@code null} unsets it. */
    public RankWorkerOptions setPp(Integer pp) {
        this.pp = pp == null ? null : OptionRules.atLeast("pp", pp, 0);
        return this;
    }

    /** The rank's tensor-parallel index within its stage, or {@code null} while unset. */
    public Integer getTp() {
        return tp;
    }

    /** The rank's tensor-parallel index, 0 or more; {@code null} unsets it. */
    public RankWorkerOptions setTp(Integer tp) {
        this.tp = tp == null ? null : OptionRules.atLeast("tp", tp, 0);
        return this;
    }

    public String getDevice() {
        return device;
    }

    /** The device kind the worker opens: {@code sim} or {@code cuda}. */
    public RankWorkerOptions setDevice(String device) {
        this.device = OptionRules.deviceKind("device", device);
        return this;
    }

    public int getGpu() {
        return gpu;
    }

    /** The GPU index the worker opens (for {@code sim}, the simulated GPU's). */
    public RankWorkerOptions setGpu(int gpu) {
        this.gpu = OptionRules.atLeast("gpu", gpu, 0);
        return this;
    }

    /** The sim device's options; the defaults when none were given. */
    public SimOptions getSim() {
        return sim;
    }

    /** Sim device options: capacityBytes, granularity, latency, faults, gpuKey ({@link SimOptions}); used with {@code device sim} only. */
    public RankWorkerOptions setSim(SimOptions sim) {
        if (sim == null) {
            throw new IllegalArgumentException("sim must be the sim device's options, got nothing");
        }
        this.sim = sim;
        return this;
    }

    /** How long a sender waits for this worker's answer, when the deployment says so, or {@code null}. */
    public Long getSendTimeoutMs() {
        return sendTimeoutMs;
    }

    /**
     * How long a sender waits for this worker's answer; the worker itself sends nothing and only
     * carries the value for the processes that share its options. {@code null} unsets it.
     */
    public RankWorkerOptions setSendTimeoutMs(Long sendTimeoutMs) {
        this.sendTimeoutMs = sendTimeoutMs == null ? null : OptionRules.atLeast("sendTimeoutMs", sendTimeoutMs, 1L);
        return this;
    }

    /** The grace set, or {@code null} for {@value #DEFAULT_LEASE_GRACE_MS} ms. */
    public Long getLeaseGraceMs() {
        return leaseGraceMs;
    }

    /**
     * How long the worker keeps a group after its owner's node left the cluster, so that a new
     * coordinator can claim it first, 0 to {@value #MAX_LEASE_GRACE_MS} ms; {@code null} for
     * {@value #DEFAULT_LEASE_GRACE_MS}.
     */
    public RankWorkerOptions setLeaseGraceMs(Long leaseGraceMs) {
        this.leaseGraceMs = leaseGraceMs == null ? null : OptionRules.inRange("leaseGraceMs", leaseGraceMs, 0L, MAX_LEASE_GRACE_MS);
        return this;
    }

    /** The share set, or {@code null} for the device's default (see {@link #setGpuMemoryPercent}). */
    public Integer getGpuMemoryPercent() {
        return gpuMemoryPercent;
    }

    /**
     * The share of the GPU's memory, 1 to 100 %, that kvpager's caches may take between them:
     * pages, kept handles and what groups hold besides their pages. It is the capacity this worker
     * reports to the GPU's budget (the first cache to open the GPU's budget registers it).
     * {@code null} for the device's default: {@value #DEFAULT_CUDA_GPU_MEMORY_PERCENT} % on
     * {@code cuda}, where the CUDA contexts, kernels and the engine's own buffers live in the rest;
     * 100 % on {@code sim}, whose memory holds nothing else.
     */
    public RankWorkerOptions setGpuMemoryPercent(Integer gpuMemoryPercent) {
        this.gpuMemoryPercent = gpuMemoryPercent == null ? null : OptionRules.percent("gpuMemoryPercent", gpuMemoryPercent);
        return this;
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof RankWorkerOptions other && toJson().equals(other.toJson());
    }

    @Override
    public int hashCode() {
        return toJson().hashCode();
    }

    @Override
    public String toString() {
        return "RankWorkerOptions" + toJson().encode();
    }
}
