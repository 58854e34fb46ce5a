package io.kvpager.impl.worker;

import io.vertx.core.json.JsonObject;

import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.regex.Pattern;

/**
 * What one rank worker serves: cache instance, pipeline stage, tensor-parallel rank, device kind,
 * GPU index and the sim device's options. A data object: read from JSON, written back with
 * {@link #toJson()}, every field validated with a message naming it.
 *
 * <p>JSON: {@code {"instance": "llama", "pp": 0, "tp": 1, "device": "sim", "gpu": 0,
 * "sim": {...}, "sendTimeoutMs": 5000, "leaseGraceMs": 3000}}; {@code sim}, {@code sendTimeoutMs} and
 * {@code leaseGraceMs} are optional.
 * Unknown keys are rejected so that a misspelt key never falls back to a default silently.
 */
public final class WorkerConfig {

    /** The device kinds a worker can open. */
    public static final Set<String> DEVICE_KINDS = Set.of("sim", "cuda");

    private static final Pattern INSTANCE_NAME = Pattern.compile("[A-Za-z0-9_-]+");
    private static final Set<String> KEYS = Set.of("instance", "pp", "tp", "device", "gpu", "sim", "sendTimeoutMs", "leaseGraceMs");
    /** How long a group outlives its owner's node by default: a few seconds, so a restarting coordinator can claim it first. */
    public static final long DEFAULT_LEASE_GRACE_MS = 3_000;
    /** The longest grace taken: an hour. Longer would hold a dead coordinator's GPU memory for no one. */
    public static final long MAX_LEASE_GRACE_MS = 3_600_000;

    private final String instance;
    private final int pp;
    private final int tp;
    private final String device;
    private final int gpu;
    private final JsonObject sim;
    private final Long sendTimeoutMs;
    private final Long leaseGraceMs;

    /**
     * @throws IllegalArgumentException naming the first missing, mistyped or out-of-range field
     */
    public WorkerConfig(String instance, int pp, int tp, String device, int gpu, JsonObject sim, Long sendTimeoutMs) {
        this(instance, pp, tp, device, gpu, sim, sendTimeoutMs, null);
    }

    /**
     * @param leaseGraceMs how long this worker keeps a group whose owner's node left the cluster
     *     before it releases it, 0 to {@value #MAX_LEASE_GRACE_MS}; null for {@value #DEFAULT_LEASE_GRACE_MS}
     * @throws IllegalArgumentException naming the first missing, mistyped or out-of-range field
     */
    public WorkerConfig(String instance, int pp, int tp, String device, int gpu, JsonObject sim, Long sendTimeoutMs,
                        Long leaseGraceMs) {
        if (instance == null || !INSTANCE_NAME.matcher(instance).matches()) {
            throw new IllegalArgumentException("worker config: instance must be a non-empty name of letters, digits, '_' and '-', got "
                    + (instance == null ? "nothing" : "'" + instance + "'"));
        }
        if (pp < 0) {
            throw new IllegalArgumentException("worker config: pp must be >= 0, got " + pp);
        }
        if (tp < 0) {
            throw new IllegalArgumentException("worker config: tp must be >= 0, got " + tp);
        }
        if (device == null || !DEVICE_KINDS.contains(device)) {
            throw new IllegalArgumentException("worker config: device must be \"sim\" or \"cuda\", got "
                    + (device == null ? "nothing" : "\"" + device + "\""));
        }
        if (gpu < 0) {
            throw new IllegalArgumentException("worker config: gpu must be >= 0, got " + gpu);
        }
        if (sendTimeoutMs != null && sendTimeoutMs <= 0) {
            throw new IllegalArgumentException("worker config: sendTimeoutMs must be positive, got " + sendTimeoutMs);
        }
        if (leaseGraceMs != null && (leaseGraceMs < 0 || leaseGraceMs > MAX_LEASE_GRACE_MS)) {
            throw new IllegalArgumentException("worker config: leaseGraceMs must be in 0.." + MAX_LEASE_GRACE_MS + ", got " + leaseGraceMs);
        }
        this.instance = instance;
        this.pp = pp;
        this.tp = tp;
        this.device = device;
        this.gpu = gpu;
        this.sim = sim == null ? new JsonObject() : sim.copy();
        this.sendTimeoutMs = sendTimeoutMs;
        this.leaseGraceMs = leaseGraceMs;
    }

    /** A config without sim options or send timeout. */
    public WorkerConfig(String instance, int pp, int tp, String device, int gpu) {
        this(instance, pp, tp, device, gpu, null, null);
    }

    /**
     * Reads a config from JSON.
     *
     * @throws IllegalArgumentException naming the first unknown, missing, mistyped or out-of-range field
     */
    public WorkerConfig(JsonObject json) {
        Objects.requireNonNull(json, "json");
        for (String key : json.fieldNames()) {
            if (!KEYS.contains(key)) {
                throw new IllegalArgumentException("worker config: unknown key '" + key + "'; known keys: "
                        + String.join(", ", KEYS.stream().sorted().toList()));
            }
        }
        this(string(json, "instance"), integer(json, "pp"), integer(json, "tp"), string(json, "device"),
                integer(json, "gpu"), object(json, "sim"), optionalLong(json, "sendTimeoutMs"), optionalLong(json, "leaseGraceMs"));
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
        return device;
    }

    public int gpu() {
        return gpu;
    }

    /** The sim device's options (a copy); empty when none were given. */
    public JsonObject sim() {
        return sim.copy();
    }

    /** The options handed to the device factory: the sim options for {@code sim}, none for {@code cuda}. */
    public Map<String, Object> deviceOptions() {
        return "sim".equals(device) ? sim.copy().getMap() : Map.of();
    }

    /**
     * How long a sender waits for this worker's answer, when the deployment says so; the worker
     * itself sends nothing and only carries the value for the processes that share its config.
     */
    public Long sendTimeoutMs() {
        return sendTimeoutMs;
    }

    /**
     * How long the worker keeps a group after its owner's node left the cluster, so that a new
     * coordinator can claim it first; then the group's pages and handles are released.
     */
    public long leaseGraceMs() {
        return leaseGraceMs == null ? DEFAULT_LEASE_GRACE_MS : leaseGraceMs;
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
        return "kvpager." + instance + ".pp" + pp + ".tp" + tp;
    }

    /**
     * The worker pool the rank runs on: {@code kvpager-gpu<G>-pp<P>-tp<R>}. Its one thread is
     * named after it ({@code kvpager-gpu0-pp0-tp1-0}), so a thread dump shows which GPU and
     * rank a stuck driver call belongs to.
     */
    public String workerPoolName() {
        return "kvpager-gpu" + gpu + "-pp" + pp + "-tp" + tp;
    }

    public JsonObject toJson() {
        JsonObject json = new JsonObject()
                .put("instance", instance)
                .put("pp", pp)
                .put("tp", tp)
                .put("device", device)
                .put("gpu", gpu)
                .put("sim", sim.copy());
        if (sendTimeoutMs != null) {
            json.put("sendTimeoutMs", sendTimeoutMs);
        }
        if (leaseGraceMs != null) {
            json.put("leaseGraceMs", leaseGraceMs);
        }
        return json;
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof WorkerConfig other && toJson().equals(other.toJson());
    }

    @Override
    public int hashCode() {
        return toJson().hashCode();
    }

    @Override
    public String toString() {
        return toJson().encode();
    }

    private static String string(JsonObject json, String key) {
        Object value = json.getValue(key);
        if (value == null) {
            throw new IllegalArgumentException("worker config: " + key + " is required");
        }
        if (!(value instanceof String s)) {
            throw new IllegalArgumentException("worker config: " + key + " must be a string, got " + describe(value));
        }
        return s;
    }

    private static int integer(JsonObject json, String key) {
        Object value = json.getValue(key);
        if (value == null) {
            throw new IllegalArgumentException("worker config: " + key + " is required");
        }
        if (!(value instanceof Integer || value instanceof Long || value instanceof Short || value instanceof Byte)
                || ((Number) value).longValue() != ((Number) value).intValue()) {
            throw new IllegalArgumentException("worker config: " + key + " must be an integer, got " + describe(value));
        }
        return ((Number) value).intValue();
    }

    private static Long optionalLong(JsonObject json, String key) {
        Object value = json.getValue(key);
        if (value == null) {
            return null;
        }
        if (!(value instanceof Integer || value instanceof Long || value instanceof Short || value instanceof Byte)) {
            throw new IllegalArgumentException("worker config: " + key + " must be an integer, got " + describe(value));
        }
        return ((Number) value).longValue();
    }

    private static JsonObject object(JsonObject json, String key) {
        Object value = json.getValue(key);
        if (value == null) {
            return null;
        }
        if (!(value instanceof JsonObject o)) {
            throw new IllegalArgumentException("worker config: " + key + " must be an object, got " + describe(value));
        }
        return o;
    }

    public static String describe(Object value) {
        return value instanceof String s ? "\"" + s + "\" (String)" : value + " (" + value.getClass().getSimpleName() + ")";
    }
}
