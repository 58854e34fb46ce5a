package io.kvpager.device;

import io.kvpager.spi.Device;
import io.kvpager.spi.DeviceException;
import io.kvpager.spi.MemoryInfo;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * A {@link Device} for core tests that keeps the driver's bookkeeping rules (granularity, whole
 * handles mapped at offset 0 inside a reserved range, no overlaps, access only on mapped memory,
 * memory returned when a released handle's last mapping goes) and fails the calls a test scripts.
 * It keeps no data: {@link #read} and {@link #write} are not for these tests, and {@link #fill}
 * only checks that the memory is mapped.
 */
public final class FakeDevice implements Device {

    public static final long GRANULARITY = 2L << 20;

    private record Range(long address, long size) {}

    private record Handle(long size, boolean released) {}

    private record Mapping(long size, long handle) {}

    private record Fault(String call, int nth, String errorName) {}

    private final long capacity;
    private long usedBytes;
    private long nextAddress = 1L << 40;
    private long nextHandle = 1;
    private final TreeMap<Long, Range> ranges = new TreeMap<>();
    private final Map<Long, Handle> handles = new HashMap<>();
    private final TreeMap<Long, Mapping> mappings = new TreeMap<>();
    private final Map<Long, Integer> mappingsOfHandle = new HashMap<>();
    private final Map<Long, Boolean> accessible = new HashMap<>();
    private final Map<String, Integer> calls = new HashMap<>();
    private final List<Fault> faults = new ArrayList<>();
    /** Every call made, in order: {@code "cuMemMap"}, {@code "cuCtxSynchronize"}, ... */
    final List<String> log = new ArrayList<>();
    private boolean closed;

    public FakeDevice(long capacity) {
        this.capacity = capacity;
    }

    /** The {@code nth} call (counted from now, 1 = the next one) of {@code call} fails with {@code errorName}. */
    public void failOn(String call, int nth, String errorName) {
        faults.add(new Fault(call, calls.getOrDefault(call, 0) + nth, errorName));
    }

    /** Whether a scripted failure is still to come. */
    public boolean faultsPending() {
        return faults.stream().anyMatch(f -> f.nth() > calls.getOrDefault(f.call(), 0));
    }

    public void forgetFaults() {
        faults.clear();
    }

    public int liveHandles() {
        return (int) handles.values().stream().filter(h -> !h.released()).count();
    }

    /** Handles whose memory is still held: live, or released but still mapped. */
    public int heldHandles() {
        return handles.size();
    }

    public int mappingCount() {
        return mappings.size();
    }

    public boolean isMappedAt(long address) {
        return mappings.containsKey(address);
    }

    /** The handle mapped at {@code address}, or 0 when none is. */
    public long handleAt(long address) {
        Mapping m = mappings.get(address);
        return m == null ? 0 : m.handle();
    }

    public int reservedRanges() {
        return ranges.size();
    }

    private void enter(String call) {
        log.add(call);
        if (closed) {
            throw new DeviceException(call, DeviceException.NOT_INITIALIZED, 3, "device closed");
        }
        int count = calls.merge(call, 1, Integer::sum);
        for (Fault fault : faults) {
            if (fault.call().equals(call) && fault.nth() == count) {
                throw new DeviceException(call, fault.errorName(), 999, "injected");
            }
        }
    }

    private static DeviceException invalid(String call, String why) {
        return new DeviceException(call, DeviceException.INVALID_VALUE, 1, why);
    }

    @Override
    public String describe() {
        return "fake:0";
    }

    @Override
    public void attach() {
        enter("cuCtxSetCurrent");
    }

    @Override
    public long granularity() {
        return GRANULARITY;
    }

    @Override
    public long reserve(long size, long alignment) {
        enter("cuMemAddressReserve");
        if (size <= 0 || size % GRANULARITY != 0 || alignment % GRANULARITY != 0) {
            throw invalid("cuMemAddressReserve", "size " + size + " alignment " + alignment);
        }
        long address = nextAddress;
        nextAddress += size + GRANULARITY; // a gap, so that ranges never touch
        ranges.put(address, new Range(address, size));
        return address;
    }

    @Override
    public void free(long address, long size) {
        enter("cuMemAddressFree");
        Range range = ranges.get(address);
        if (range == null || range.size() != size) {
            throw invalid("cuMemAddressFree", "no range of " + size + " at " + address);
        }
        var inside = mappings.subMap(address, address + size);
        if (!inside.isEmpty()) {
            throw invalid("cuMemAddressFree", inside.size() + " mappings remain in the range");
        }
        ranges.remove(address);
    }

    @Override
    public long create(long size) {
        enter("cuMemCreate");
        if (size <= 0 || size % GRANULARITY != 0) {
            throw invalid("cuMemCreate", "size " + size);
        }
        if (usedBytes + size > capacity) {
            throw new DeviceException("cuMemCreate", DeviceException.OUT_OF_MEMORY, 2, usedBytes + " of " + capacity + " used");
        }
        usedBytes += size;
        long handle = nextHandle++;
        handles.put(handle, new Handle(size, false));
        return handle;
    }

    @Override
    public void release(long handle) {
        enter("cuMemRelease");
        Handle h = handles.get(handle);
        if (h == null || h.released()) {
            throw invalid("cuMemRelease", "no handle " + handle);
        }
        if (mappingsOfHandle.getOrDefault(handle, 0) == 0) {
            handles.remove(handle);
            usedBytes -= h.size();
        } else {
            handles.put(handle, new Handle(h.size(), true));
        }
    }

    @Override
    public void map(long address, long size, long handle) {
        enter("cuMemMap");
        Handle h = handles.get(handle);
        if (h == null || h.released() || h.size() != size) {
            throw invalid("cuMemMap", "handle " + handle + " of " + (h == null ? "none" : h.size()) + " for " + size + " bytes");
        }
        var range = ranges.floorEntry(address);
        if (range == null || address + size > range.getValue().address() + range.getValue().size()) {
            throw invalid("cuMemMap", "address " + address + " is outside every reserved range");
        }
        var before = mappings.floorEntry(address + size - 1);
        if (before != null && before.getKey() + before.getValue().size() > address) {
            throw invalid("cuMemMap", "overlaps the mapping at " + before.getKey());
        }
        mappings.put(address, new Mapping(size, handle));
        mappingsOfHandle.merge(handle, 1, Integer::sum);
    }

    @Override
    public void setAccess(long address, long size) {
        enter("cuMemSetAccess");
        Mapping m = mappings.get(address);
        if (m == null || m.size() != size) {
            throw invalid("cuMemSetAccess", "nothing mapped at " + address);
        }
        accessible.put(address, true);
    }

    @Override
    public void unmap(long address, long size) {
        enter("cuMemUnmap");
        Mapping m = mappings.get(address);
        if (m == null || m.size() != size) {
            throw invalid("cuMemUnmap", "nothing mapped at " + address);
        }
        mappings.remove(address);
        accessible.remove(address);
        int left = mappingsOfHandle.merge(m.handle(), -1, Integer::sum);
        Handle h = handles.get(m.handle());
        if (left == 0 && h.released()) {
            handles.remove(m.handle());
            usedBytes -= h.size();
        }
    }

    public boolean isAccessible(long address) {
        return accessible.getOrDefault(address, false);
    }

    @Override
    public void synchronize() {
        enter("cuCtxSynchronize");
    }

    @Override
    public MemoryInfo memoryInfo() {
        return new MemoryInfo(capacity - usedBytes, capacity);
    }

    @Override
    public void write(long address, byte[] bytes) {
        throw new UnsupportedOperationException("the fake device keeps no data");
    }

    @Override
    public byte[] read(long address, int length) {
        throw new UnsupportedOperationException("the fake device keeps no data");
    }

    @Override
    public void fill(long address, long size, byte value) {
        enter("cuMemsetD8");
        Mapping m = mappings.get(address);
        if (m == null || size > m.size()) {
            throw invalid("cuMemsetD8", "nothing mapped at " + address);
        }
    }

    @Override
    public void close() {
        closed = true;
    }
}
