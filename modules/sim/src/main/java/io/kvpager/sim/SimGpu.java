package io.kvpager.sim;

import io.kvpager.spi.MemoryInfo;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.locks.ReentrantLock;

/**
 * One simulated physical GPU: its capacity and granularity, and the physical memory every
 * {@link SimDevice} opened on it holds. Several devices share one GPU the way several models (or
 * several processes) share one H200: they compete for the same capacity and see the same free
 * bytes in {@link #memoryInfo()}, while each keeps its own address space and handles.
 *
 * <p>Simulated driver time is spent under one lock per GPU, because the real driver serializes
 * these calls: spreading maps over 2, 4 or 8 threads on one H200 was no faster than one thread.
 *
 * <p>Thread-safe.
 */
public final class SimGpu {

    /** The smallest granularity accepted: the host page size that CUDA's smallest granularity never goes below. */
    public static final long MIN_GRANULARITY = 4096;

    private final String key;
    private final int index;
    private final long capacityBytes;
    private final long granularity;
    private final ReentrantLock driver = new ReentrantLock();
    private final List<SimDevice> devices = new ArrayList<>();
    private long bytesInUse;
    private long peakBytesInUse;
    private long handlesAlive;

    /** A GPU outside any registry, for tests that want one to themselves. */
    public SimGpu(long capacityBytes, long granularity) {
        this("standalone", 0, capacityBytes, granularity);
    }

    /**
     * @param key the registry namespace it lives in ({@link SimGpus})
     * @param index the GPU index within that namespace
     * @throws IllegalArgumentException when granularity is not a power of two of at least
     *     {@value #MIN_GRANULARITY}, or the capacity holds less than one granule
     */
    public SimGpu(String key, int index, long capacityBytes, long granularity) {
        if (key == null || key.isBlank()) {
            throw new IllegalArgumentException("a GPU key must not be blank");
        }
        if (index < 0) {
            throw new IllegalArgumentException("a GPU index cannot be negative: " + index);
        }
        if (granularity < MIN_GRANULARITY || Long.bitCount(granularity) != 1) {
            throw new IllegalArgumentException("granularity must be a power of two of at least " + MIN_GRANULARITY
                    + " bytes, got " + granularity);
        }
        if (capacityBytes < granularity) {
            throw new IllegalArgumentException("capacityBytes " + capacityBytes + " holds no allocation of the granularity "
                    + granularity + "; give at least " + granularity);
        }
        this.key = key;
        this.index = index;
        this.capacityBytes = capacityBytes;
        this.granularity = granularity;
    }

    /** Opens a device for {@code rank} with no latency and no faults. */
    public SimDevice open(String rank) {
        return open(rank, LatencyModel.none(), new FaultPlan());
    }

    /** Opens a device for {@code rank} on this GPU. */
    public SimDevice open(String rank, LatencyModel latency, FaultPlan faults) {
        SimDevice device = new SimDevice(this, rank, latency, faults);
        synchronized (this) {
            devices.add(device);
        }
        return device;
    }

    public String key() {
        return key;
    }

    public int index() {
        return index;
    }

    public long capacityBytes() {
        return capacityBytes;
    }

    public long granularity() {
        return granularity;
    }

    /** Physical bytes held by every device's live handles, released-but-mapped ones included. */
    public synchronized long bytesInUse() {
        return bytesInUse;
    }

    public synchronized long freeBytes() {
        return capacityBytes - bytesInUse;
    }

    /** The most bytes ever in use at once. */
    public synchronized long peakBytesInUse() {
        return peakBytesInUse;
    }

    /** Physical allocations that still hold memory, on every device. */
    public synchronized long handlesAlive() {
        return handlesAlive;
    }

    /** What {@code cuMemGetInfo} reports on any device of this GPU. */
    public synchronized MemoryInfo memoryInfo() {
        return new MemoryInfo(capacityBytes - bytesInUse, capacityBytes);
    }

    /** The devices open on this GPU now. */
    public synchronized List<SimDevice> devices() {
        return List.copyOf(devices);
    }

    public synchronized boolean hasOpenDevices() {
        return !devices.isEmpty();
    }

    /**
     * Physical bytes held per rank label, summed over the devices open with that label (several
     * models' {@code pp0/tp0} on one GPU add up); sorted by label.
     */
    public Map<String, Long> bytesInUseByRank() {
        Map<String, Long> byRank = new TreeMap<>();
        devices().forEach(d -> byRank.merge(d.rank(), d.bytesInUse(), Long::sum));
        return byRank;
    }

    /** Live mappings on every device. */
    public int mappingCount() {
        return devices().stream().mapToInt(SimDevice::mappingCount).sum();
    }

    /** Host bytes that hold written device bytes, on every device. */
    public long backingBytes() {
        return devices().stream().mapToLong(SimDevice::backingBytes).sum();
    }

    /** Takes {@code bytes} of capacity for a new handle; false when they are not free. */
    synchronized boolean charge(long bytes) {
        if (bytes > capacityBytes - bytesInUse) {
            return false;
        }
        bytesInUse += bytes;
        handlesAlive++;
        peakBytesInUse = Math.max(peakBytesInUse, bytesInUse);
        return true;
    }

    /** Gives back a handle's {@code bytes}. */
    synchronized void credit(long bytes) {
        bytesInUse -= bytes;
        handlesAlive--;
    }

    synchronized void detach(SimDevice device) {
        devices.remove(device);
    }

    /** Spends {@code nanos} of simulated driver time, one call at a time per GPU. */
    void spend(long nanos) {
        if (nanos <= 0) {
            return;
        }
        driver.lock();
        try {
            LatencyModel.await(nanos);
        } finally {
            driver.unlock();
        }
    }

    /** {@code "0"} in the default namespace, {@code "key/0"} elsewhere. */
    String label() {
        return SimGpus.DEFAULT_KEY.equals(key) ? Integer.toString(index) : key + "/" + index;
    }

    @Override
    public synchronized String toString() {
        return "sim gpu " + label() + ": " + bytesInUse + " of " + capacityBytes + " bytes in use, "
                + handlesAlive + " handles, " + devices.size() + " devices";
    }
}
