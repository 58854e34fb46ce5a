package io.kvpager.worker;

import io.kvpager.internal.options.OptionReader;
import io.kvpager.internal.options.OptionRules;
import io.vertx.codegen.annotations.DataObject;
import io.vertx.core.json.JsonObject;

import java.util.List;

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

    private static final List<String> KEYS = List.of("instance", "pp", "tp", "device", "gpu", "sim", "sendTimeoutMs", "leaseGraceMs",
            "gpuMemoryPercent");

    private String instance;
    private Integer pp;
    private Integer tp;
    private String device = DEFAULT_DEVICE;
    private int gpu;
    private JsonObject sim = new JsonObject();
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
        OptionReader.knownKeys(json, KEYS, "worker option");
        for (String key : json.fieldNames()) {
            Object value = json.getValue(key);
            if (value == null) {
                switch (key) {
                    case "sim" -> sim = new JsonObject();
                    case "sendTimeoutMs" -> sendTimeoutMs = null;
                    case "leaseGraceMs" -> leaseGraceMs = null;
                    case "gpuMemoryPercent" -> gpuMemoryPercent = null;
                    default -> throw OptionRules.required(key);
                }
                continue;
            }
            switch (key) {
                case "instance" -> setInstance(OptionReader.string(key, value));
                case "pp" -> setPp(OptionReader.integer(key, value));
                case "tp" -> setTp(OptionReader.integer(key, value));
                case "device" -> setDevice(OptionReader.string(key, value));
                case "gpu" -> setGpu(OptionReader.integer(key, value));
                case "sim" -> setSim(OptionReader.object(key, value));
                case "sendTimeoutMs" -> setSendTimeoutMs(OptionReader.longValue(key, value));
                case "leaseGraceMs" -> setLeaseGraceMs(OptionReader.longValue(key, value));
                case "gpuMemoryPercent" -> setGpuMemoryPercent(OptionReader.integer(key, value));
                default -> throw new IllegalStateException(key);
            }
        }
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
        JsonObject json = new JsonObject();
        if (instance != null) {
            json.put("instance", instance);
        }
        if (pp != null) {
            json.put("pp", pp);
        }
        if (tp != null) {
            json.put("tp", tp);
        }
        json.put("device", device).put("gpu", gpu).put("sim", sim.copy());
        if (sendTimeoutMs != null) {
            json.put("sendTimeoutMs", sendTimeoutMs);
        }
        if (leaseGraceMs != null) {
            json.put("leaseGraceMs", leaseGraceMs);
        }
        if (gpuMemoryPercent != null) {
            json.put("gpuMemoryPercent", gpuMemoryPercent);
        }
        return json;
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

    public RankWorkerOptions setPp(int pp) {
        this.pp = OptionRules.atLeast("pp", pp, 0);
        return this;
    }

    /** The rank's tensor-parallel index within its stage, or {@code null} while unset. */
    public Integer getTp() {
        return tp;
    }

    public RankWorkerOptions setTp(int tp) {
        this.tp = OptionRules.atLeast("tp", tp, 0);
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

    /** The sim device's options (a copy); empty when none were given. */
    public JsonObject getSim() {
        return sim.copy();
    }

    /** Sim device options: capacityBytes, granularity, latency, faults, gpuKey; used with {@code device sim} only. */
    public RankWorkerOptions setSim(JsonObject sim) {
        if (sim == null) {
            throw new IllegalArgumentException("sim must be a JSON object of sim device options, got nothing");
        }
        this.sim = sim.copy();
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
