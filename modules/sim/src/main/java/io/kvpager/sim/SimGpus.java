package io.kvpager.sim;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;

/**
 * The process-wide registry of simulated GPUs, so that every device opened with the same GPU
 * index shares one {@link SimGpu}: three models' workers on GPU 0 compete for one H200's memory.
 *
 * <p>GPUs live in namespaces named by a key: the {@code gpuKey} option of the sim device,
 * {@value #DEFAULT_KEY} when absent. A test that wants GPUs to itself gives its devices a key of
 * its own (its name, say) and reads them back with {@link #gpu(String, int)}; tests running in the
 * same JVM then never see each other's memory, and none needs {@link #reset()}.
 *
 * <p>The first device opened on a GPU sets its capacity and granularity. A later device asking for
 * other values is refused while the GPU has open devices, and replaces it with a fresh GPU once it
 * has none. Thread-safe.
 */
public final class SimGpus {

    /** The namespace of devices opened without a {@code gpuKey}. */
    public static final String DEFAULT_KEY = "default";

    private static final Map<String, Map<Integer, SimGpu>> GPUS = new HashMap<>();

    private SimGpus() {
    }

    /** GPU {@code index} of the default namespace. */
    public static SimGpu gpu(int index) {
        return gpu(DEFAULT_KEY, index);
    }

    /**
     * GPU {@code index} of namespace {@code key}.
     *
     * @throws IllegalArgumentException when no device has opened it, naming the GPUs that exist
     */
    public static synchronized SimGpu gpu(String key, int index) {
        return find(key, index).orElseThrow(() -> new IllegalArgumentException("no sim gpu " + index + " under key \""
                + key + "\"; open ones: " + all().stream().map(SimGpu::label).toList()));
    }

    public static synchronized Optional<SimGpu> find(String key, int index) {
        return Optional.ofNullable(GPUS.getOrDefault(key, Map.of()).get(index));
    }

    /** Every GPU of namespace {@code key}, by index. */
    public static synchronized List<SimGpu> gpus(String key) {
        return List.copyOf(new TreeMap<>(GPUS.getOrDefault(key, Map.of())).values());
    }

    /** Every GPU in every namespace. */
    public static synchronized List<SimGpu> all() {
        List<SimGpu> all = new ArrayList<>();
        new TreeMap<>(GPUS).values().forEach(byIndex -> all.addAll(new TreeMap<>(byIndex).values()));
        return all;
    }

    /** Forgets every GPU; devices still open keep theirs, and the next open makes a fresh one. */
    public static synchronized void reset() {
        GPUS.clear();
    }

    /** Forgets the GPUs of namespace {@code key}. */
    public static synchronized void reset(String key) {
        GPUS.remove(key);
    }

    /** Opens a device for {@code rank} on GPU {@code index} of {@code options.gpuKey()}, making the GPU if needed. */
    static synchronized SimDevice open(int index, String rank, SimOptions options) {
        if (index < 0) {
            throw new IllegalArgumentException("a GPU index cannot be negative: " + index);
        }
        if (rank == null || rank.isBlank()) {
            throw new IllegalArgumentException("a device needs a rank label such as \"pp0/tp1\"");
        }
        Map<Integer, SimGpu> byIndex = GPUS.computeIfAbsent(options.gpuKey(), k -> new HashMap<>());
        SimGpu gpu = byIndex.get(index);
        boolean same = gpu != null && gpu.capacityBytes() == options.capacityBytes() && gpu.granularity() == options.granularity();
        if (gpu != null && !same && gpu.hasOpenDevices()) {
            throw new IllegalArgumentException("sim gpu " + gpu.label() + " is open with capacityBytes " + gpu.capacityBytes()
                    + " and granularity " + gpu.granularity() + "; this device asks for " + options.capacityBytes() + " and "
                    + options.granularity() + ". Open it with the same values, or use another gpuKey");
        }
        if (!same) {
            gpu = new SimGpu(options.gpuKey(), index, options.capacityBytes(), options.granularity());
            byIndex.put(index, gpu);
        }
        return gpu.open(rank, options.latencyModel(options.gpuKey() + "/" + index + "/" + rank), options.faultPlan());
    }
}
