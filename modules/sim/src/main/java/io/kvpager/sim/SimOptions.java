package io.kvpager.sim;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The {@code sim} device kind's options, as a worker's config carries them:
 * <pre>{@code
 * {"capacityBytes": 151397597184, "granularity": 2097152, "latency": true,
 *  "faults": [{"op": "map", "rank": "pp0/tp1", "page": 5, "error": "CUDA_ERROR_OUT_OF_MEMORY"}],
 *  "gpuKey": "my-test"}
 * }</pre>
 *
 * @param capacityBytes the GPU's memory; default 141 GiB, an H200
 * @param granularity the allocation granularity; a power of two of at least 4096, default 2 MiB
 * @param latency whether calls take the H200's measured time; default false
 * @param faults the fault plan each device opened with these options starts with
 * @param gpuKey the {@link SimGpus} namespace; devices with the same key and GPU index share a GPU
 */
public record SimOptions(long capacityBytes, long granularity, boolean latency, List<Fault> faults, String gpuKey) {

    /** An H200's memory: 141 GiB. */
    public static final long DEFAULT_CAPACITY_BYTES = 141L << 30;
    /** The driver's usual granularity: 2 MiB. */
    public static final long DEFAULT_GRANULARITY = 2L << 20;

    /** The keys the options may carry. */
    public static final List<String> KEYS = List.of("capacityBytes", "granularity", "latency", "faults", "gpuKey");

    public SimOptions {
        if (granularity < SimGpu.MIN_GRANULARITY || Long.bitCount(granularity) != 1) {
            throw new IllegalArgumentException("granularity must be a power of two of at least " + SimGpu.MIN_GRANULARITY
                    + " bytes, got " + granularity + "; accepted keys: " + KEYS);
        }
        if (capacityBytes < granularity) {
            throw new IllegalArgumentException("capacityBytes must be at least the granularity " + granularity + ", got "
                    + capacityBytes + "; accepted keys: " + KEYS);
        }
        faults = faults == null ? List.of() : List.copyOf(faults);
        if (gpuKey == null || gpuKey.isBlank()) {
            throw new IllegalArgumentException("gpuKey must not be blank; leave it out for the default \"" + SimGpus.DEFAULT_KEY
                    + "\"; accepted keys: " + KEYS);
        }
    }

    /** The defaults: one 141 GiB GPU, 2 MiB granularity, no latency, no faults. */
    public static SimOptions defaults() {
        return new SimOptions(DEFAULT_CAPACITY_BYTES, DEFAULT_GRANULARITY, false, List.of(), SimGpus.DEFAULT_KEY);
    }

    /** These options with the GPU's memory {@code capacityBytes}. */
    public SimOptions withCapacityBytes(long capacityBytes) {
        return new SimOptions(capacityBytes, granularity, latency, faults, gpuKey);
    }

    /** These options with the allocation granularity {@code granularity}. */
    public SimOptions withGranularity(long granularity) {
        return new SimOptions(capacityBytes, granularity, latency, faults, gpuKey);
    }

    /** These options with calls taking the H200's measured time, or none. */
    public SimOptions withLatency(boolean latency) {
        return new SimOptions(capacityBytes, granularity, latency, faults, gpuKey);
    }

    /** These options with the fault plan {@code faults}. */
    public SimOptions withFaults(List<Fault> faults) {
        return new SimOptions(capacityBytes, granularity, latency, faults, gpuKey);
    }

    /** These options in the {@link SimGpus} namespace {@code gpuKey}. */
    public SimOptions withGpuKey(String gpuKey) {
        return new SimOptions(capacityBytes, granularity, latency, faults, gpuKey);
    }

    /**
     * Reads the options; {@code null} or empty gives {@link #defaults()}.
     *
     * @throws IllegalArgumentException for an unknown key or a mistyped or out-of-range value,
     *     listing the accepted keys
     */
    public static SimOptions parse(Map<String, ?> options) {
        if (options == null) {
            return defaults();
        }
        for (String key : options.keySet()) {
            if (!KEYS.contains(key)) {
                throw new IllegalArgumentException("unknown sim option \"" + key + "\"; accepted keys: " + KEYS);
            }
        }
        long capacity = options.containsKey("capacityBytes") ? bytes(options, "capacityBytes") : DEFAULT_CAPACITY_BYTES;
        long granularity = options.containsKey("granularity") ? bytes(options, "granularity") : DEFAULT_GRANULARITY;
        boolean latency = false;
        if (options.containsKey("latency")) {
            if (!(options.get("latency") instanceof Boolean on)) {
                throw mistyped("latency", "true or false", options.get("latency"));
            }
            latency = on;
        }
        List<Fault> faults = FaultPlan.parse(options.get("faults")).faults();
        String gpuKey = SimGpus.DEFAULT_KEY;
        if (options.containsKey("gpuKey")) {
            if (!(options.get("gpuKey") instanceof String key)) {
                throw mistyped("gpuKey", "a string", options.get("gpuKey"));
            }
            gpuKey = key;
        }
        return new SimOptions(capacity, granularity, latency, faults, gpuKey);
    }

    /** These options as a config map; {@link #parse} of it gives equal options. */
    public Map<String, Object> toMap() {
        Map<String, Object> map = new LinkedHashMap<>();
        map.put("capacityBytes", capacityBytes);
        map.put("granularity", granularity);
        map.put("latency", latency);
        List<Map<String, Object>> entries = new ArrayList<>();
        faults.forEach(f -> entries.add(f.toMap()));
        map.put("faults", entries);
        map.put("gpuKey", gpuKey);
        return map;
    }

    /** A fresh plan holding {@link #faults()}, for one device. */
    public FaultPlan faultPlan() {
        FaultPlan plan = new FaultPlan();
        faults.forEach(plan::add);
        return plan;
    }

    /** The latency model for one device; draws are seeded from {@code seedName} so runs repeat. */
    public LatencyModel latencyModel(String seedName) {
        return latency ? LatencyModel.h200(seedName.hashCode()) : LatencyModel.none();
    }

    private static long bytes(Map<String, ?> options, String key) {
        Object value = options.get(key);
        long number = switch (value) {
            case Integer i -> i;
            case Long l -> l;
            case null, default -> throw mistyped(key, "an integer number of bytes", value);
        };
        if (number <= 0) {
            throw new IllegalArgumentException(key + " must be a positive number of bytes, got " + number + "; accepted keys: " + KEYS);
        }
        return number;
    }

    private static IllegalArgumentException mistyped(String key, String expected, Object value) {
        return new IllegalArgumentException(key + " must be " + expected + ", got " + Fault.describe(value) + "; accepted keys: " + KEYS);
    }
}
