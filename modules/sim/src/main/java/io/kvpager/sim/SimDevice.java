package io.kvpager.sim;

import io.kvpager.spi.Device;
import io.kvpager.spi.DeviceException;
import io.kvpager.spi.MemoryInfo;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

/**
 * One rank's view of a {@link SimGpu}, keeping the CUDA virtual memory API's rules:
 * <ul>
 * <li>sizes and addresses are multiples of the granularity, else {@code CUDA_ERROR_INVALID_VALUE};
 * <li>a map takes a whole live handle (size equal to the handle's) into one reserved range, and
 *     may not overlap another mapping; one handle may be mapped at several addresses;
 * <li>access is granted on whole mappings, and only accessible mappings can be read or written
 *     ({@code CUDA_ERROR_ILLEGAL_ADDRESS} elsewhere);
 * <li>an unmap matches one mapping exactly; a range is freed only once nothing is mapped in it;
 * <li>releasing a mapped handle defers its physical release to its last unmap;
 * <li>creating beyond the GPU's free memory fails with {@code CUDA_ERROR_OUT_OF_MEMORY};
 * <li>after {@link #attach()} only attached threads may call (else
 *     {@code CUDA_ERROR_INVALID_CONTEXT}), as a CUDA context is current per thread;
 * <li>after {@link #close()} every call fails with {@code CUDA_ERROR_NOT_INITIALIZED}.
 * </ul>
 * A failed call changes nothing. Each device has its own address space and handles; its physical
 * memory is charged to the shared GPU.
 *
 * <p>Before a call acts, its {@link FaultPlan} may delay, hang or fail it; after it succeeds, its
 * {@link LatencyModel} makes it take the driver's time.
 *
 * <p>Thread-safe, although the {@link Device} contract confines use to one thread; the accounting
 * methods ({@link #handlesAlive()}, {@link #mappings()}, ...) may be read from any thread.
 */
public final class SimDevice implements Device {

    /** Each device's addresses lie in their own window, so an address used on the wrong rank fails. */
    private static final long WINDOW_BYTES = 1L << 45;
    /** Window bases stay below 2^53 so addresses survive JSON readers that use doubles. */
    private static final long WINDOW_BASE = 1L << 47;
    private static final int WINDOWS = 128;

    private static final AtomicInteger SERIAL = new AtomicInteger();
    private static final AtomicLong HANDLES = new AtomicLong();

    private final SimGpu gpu;
    private final String rank;
    private final LatencyModel latency;
    private final FaultPlan faults;
    private final long granularity;
    private final long windowStart;
    private final long windowEnd;
    private final Set<Thread> attached = ConcurrentHashMap.newKeySet();
    private final AtomicLong driverNanos = new AtomicLong();
    private volatile boolean closed;

    // Guarded by this.
    private final TreeMap<Long, ReservedRange> reservations = new TreeMap<>();
    private final TreeMap<Long, Mapping> mappings = new TreeMap<>();
    private final Map<Long, SimHandle> handles = new HashMap<>();
    private long bytesInUse;

    SimDevice(SimGpu gpu, String rank, LatencyModel latency, FaultPlan faults) {
        if (rank == null || rank.isBlank()) {
            throw new IllegalArgumentException("a device needs a rank label such as \"pp0/tp1\"");
        }
        if (latency == null || faults == null) {
            throw new IllegalArgumentException("latency and faults are required; use LatencyModel.none() and new FaultPlan()");
        }
        this.gpu = gpu;
        this.rank = rank;
        this.latency = latency;
        this.faults = faults;
        this.granularity = gpu.granularity();
        this.windowStart = WINDOW_BASE + Math.floorMod(SERIAL.getAndIncrement(), WINDOWS) * WINDOW_BYTES;
        this.windowEnd = windowStart + WINDOW_BYTES;
    }

    @Override
    public String describe() {
        return "sim:" + gpu.label() + " " + rank;
    }

    @Override
    public void attach() {
        live("cuCtxSetCurrent");
        attached.add(Thread.currentThread());
    }

    @Override
    public long granularity() {
        enter("cuMemGetAllocationGranularity");
        return granularity;
    }

    @Override
    public long reserve(long size, long alignment) {
        before(DriverCall.RESERVE, Fault.ANY_PAGE);
        long address;
        synchronized (this) {
            live(DriverCall.RESERVE.driverName());
            requireGranules(DriverCall.RESERVE, "size", size);
            if (alignment < 0 || (alignment != 0 && Long.bitCount(alignment) != 1)) {
                throw invalid(DriverCall.RESERVE, "alignment must be 0 or a power of two, got " + alignment);
            }
            long align = Math.max(alignment, granularity);
            address = firstFit(size, align);
            if (address < 0) {
                throw error(DriverCall.RESERVE, DeviceException.OUT_OF_MEMORY,
                        "no room for " + size + " bytes in this device's " + WINDOW_BYTES + "-byte address space");
            }
            reservations.put(address, new ReservedRange(address, size));
        }
        spend(DriverCall.RESERVE);
        return address;
    }

    @Override
    public void free(long address, long size) {
        before(DriverCall.FREE, Fault.ANY_PAGE);
        synchronized (this) {
            live(DriverCall.FREE.driverName());
            ReservedRange range = reservations.get(address);
            if (range == null || range.size() != size) {
                throw invalid(DriverCall.FREE, "no reserved range of " + size + " bytes at " + hex(address)
                        + (range == null ? "" : "; the range there is " + range.size() + " bytes"));
            }
            int mapped = mappings.subMap(range.address(), range.end()).size();
            if (mapped > 0) {
                throw invalid(DriverCall.FREE, "range " + range + " still has " + mapped + " mappings");
            }
            reservations.remove(address);
        }
        spend(DriverCall.FREE);
    }

    @Override
    public long create(long size) {
        before(DriverCall.CREATE, Fault.ANY_PAGE);
        long id;
        synchronized (this) {
            live(DriverCall.CREATE.driverName());
            requireGranules(DriverCall.CREATE, "size", size);
            if (!gpu.charge(size)) {
                MemoryInfo info = gpu.memoryInfo();
                throw error(DriverCall.CREATE, DeviceException.OUT_OF_MEMORY, size + " bytes asked, " + info.freeBytes()
                        + " of " + info.totalBytes() + " free on sim gpu " + gpu.label());
            }
            id = HANDLES.incrementAndGet();
            handles.put(id, new SimHandle(id, size));
            bytesInUse += size;
        }
        spend(DriverCall.CREATE);
        return id;
    }

    @Override
    public void release(long handle) {
        before(DriverCall.RELEASE, Fault.ANY_PAGE);
        synchronized (this) {
            live(DriverCall.RELEASE.driverName());
            SimHandle h = liveHandle(DriverCall.RELEASE, handle);
            h.released = true;
            if (h.mappings == 0) {
                destroy(h);
            }
        }
        spend(DriverCall.RELEASE);
    }

    @Override
    public void map(long address, long size, long handle) {
        before(DriverCall.MAP, pageOf(address, size));
        synchronized (this) {
            live(DriverCall.MAP.driverName());
            requireGranules(DriverCall.MAP, "size", size);
            requireAligned(DriverCall.MAP, address);
            SimHandle h = liveHandle(DriverCall.MAP, handle);
            if (size != h.size()) {
                throw invalid(DriverCall.MAP, "a map takes the whole handle from offset 0: size " + size
                        + " is not the handle's " + h.size() + " bytes");
            }
            if (rangeHolding(address, size) == null) {
                throw invalid(DriverCall.MAP, hex(address) + "+" + size + " is not inside one reserved range");
            }
            Map.Entry<Long, Mapping> below = mappings.lowerEntry(address + size);
            if (below != null && below.getValue().end() > address) {
                throw invalid(DriverCall.MAP, hex(address) + "+" + size + " overlaps the mapping " + below.getValue().view());
            }
            mappings.put(address, new Mapping(address, size, h));
            h.mappings++;
        }
        spend(DriverCall.MAP);
    }

    @Override
    public void setAccess(long address, long size) {
        before(DriverCall.ACCESS, pageOf(address, size));
        synchronized (this) {
            live(DriverCall.ACCESS.driverName());
            requireGranules(DriverCall.ACCESS, "size", size);
            requireAligned(DriverCall.ACCESS, address);
            if (address < 0 || address > Long.MAX_VALUE - size) {
                throw invalid(DriverCall.ACCESS, hex(address) + "+" + size + " is outside the address space");
            }
            List<Mapping> covered = new ArrayList<>();
            long cursor = address;
            while (cursor < address + size) {
                Mapping m = mappings.get(cursor);
                if (m == null || m.end() > address + size) {
                    throw invalid(DriverCall.ACCESS, hex(address) + "+" + size + " is not a range of whole mappings: "
                            + (m == null ? "nothing is mapped from " + hex(cursor) : m.view() + " runs past its end"));
                }
                covered.add(m);
                cursor = m.end();
            }
            covered.forEach(m -> m.accessible = true);
        }
        spend(DriverCall.ACCESS);
    }

    @Override
    public void unmap(long address, long size) {
        before(DriverCall.UNMAP, pageOf(address, size));
        synchronized (this) {
            live(DriverCall.UNMAP.driverName());
            requireGranules(DriverCall.UNMAP, "size", size);
            requireAligned(DriverCall.UNMAP, address);
            Mapping m = mappings.get(address);
            if (m == null) {
                throw invalid(DriverCall.UNMAP, "nothing is mapped at " + hex(address));
            }
            if (m.size != size) {
                throw invalid(DriverCall.UNMAP, "an unmap must match one mapping exactly: the mapping at " + hex(address)
                        + " is " + m.size + " bytes, not " + size);
            }
            mappings.remove(address);
            SimHandle h = m.handle;
            h.mappings--;
            if (h.released && h.mappings == 0) {
                destroy(h);
            }
        }
        spend(DriverCall.UNMAP);
    }

    @Override
    public void synchronize() {
        before(DriverCall.SYNCHRONIZE, Fault.ANY_PAGE);
        live(DriverCall.SYNCHRONIZE.driverName());
        spend(DriverCall.SYNCHRONIZE);
    }

    @Override
    public MemoryInfo memoryInfo() {
        enter("cuMemGetInfo");
        return gpu.memoryInfo();
    }

    @Override
    public void write(long address, byte[] bytes) {
        String call = "cuMemcpyHtoD";
        enter(call);
        if (bytes == null) {
            throw new DeviceException(call, DeviceException.INVALID_VALUE, 1, "no host bytes to copy");
        }
        synchronized (this) {
            live(call);
            int done = 0;
            for (Segment s : segments(call, address, bytes.length)) {
                s.bytes.write(s.offset, bytes, done, (int) s.length);
                done += (int) s.length;
            }
        }
    }

    @Override
    public byte[] read(long address, int length) {
        String call = "cuMemcpyDtoH";
        enter(call);
        if (length < 0) {
            throw new DeviceException(call, DeviceException.INVALID_VALUE, 1, "length cannot be negative: " + length);
        }
        byte[] bytes = new byte[length];
        synchronized (this) {
            live(call);
            int done = 0;
            for (Segment s : segments(call, address, length)) {
                s.bytes.read(s.offset, bytes, done, (int) s.length);
                done += (int) s.length;
            }
        }
        return bytes;
    }

    @Override
    public void fill(long address, long size, byte value) {
        String call = "cuMemsetD8";
        enter(call);
        if (size < 0) {
            throw new DeviceException(call, DeviceException.INVALID_VALUE, 1, "size cannot be negative: " + size);
        }
        synchronized (this) {
            live(call);
            for (Segment s : segments(call, address, size)) {
                s.bytes.fill(s.offset, s.length, value);
            }
        }
    }

    /**
     * Unmaps every mapping, releases every handle and frees every range this device holds, lets
     * its hanging calls go, and leaves the GPU. Idempotent; callable from any thread.
     */
    @Override
    public void close() {
        synchronized (this) {
            if (closed) {
                return;
            }
            closed = true;
            mappings.clear();
            for (SimHandle h : handles.values()) {
                h.bytes.discard();
                gpu.credit(h.size());
            }
            handles.clear();
            bytesInUse = 0;
            reservations.clear();
            attached.clear();
        }
        faults.wake();
        gpu.detach(this);
    }

    // --- accounting, for tests and status views; any thread ---

    public String rank() {
        return rank;
    }

    public SimGpu gpu() {
        return gpu;
    }

    /** This device's fault plan; tests change it while the device runs. */
    public FaultPlan faults() {
        return faults;
    }

    public LatencyModel latency() {
        return latency;
    }

    public boolean isClosed() {
        return closed;
    }

    /** Physical allocations of this device that still hold memory, released-but-mapped ones included. */
    public synchronized int handlesAlive() {
        return handles.size();
    }

    /** Handles released while mapped, whose memory goes back at their last unmap. */
    public synchronized int pendingReleases() {
        return (int) handles.values().stream().filter(h -> h.released).count();
    }

    /** Physical bytes this device's live handles hold. */
    public synchronized long bytesInUse() {
        return bytesInUse;
    }

    /** The live mappings, by address. */
    public synchronized List<MappedRange> mappings() {
        return mappings.values().stream().map(Mapping::view).toList();
    }

    public synchronized int mappingCount() {
        return mappings.size();
    }

    /** Bytes of virtual address space backed by a mapping. */
    public synchronized long mappedBytes() {
        return mappings.values().stream().mapToLong(m -> m.size).sum();
    }

    /** The live reserved ranges, by address. */
    public synchronized List<ReservedRange> reservations() {
        return List.copyOf(reservations.values());
    }

    /** Host bytes holding this device's written memory; untouched memory costs none. */
    public synchronized long backingBytes() {
        return handles.values().stream().mapToLong(h -> h.bytes.backingBytes()).sum();
    }

    /** Simulated driver time this device's calls have taken. */
    public long driverNanos() {
        return driverNanos.get();
    }

    @Override
    public String toString() {
        return describe();
    }

    // --- the rules ---

    /** The checks every call makes first, then the fault plan's say. */
    private void before(DriverCall call, long page) {
        enter(call.driverName());
        faults.apply(call, rank, page, this::isClosed);
    }

    private void enter(String call) {
        live(call);
        if (!attached.isEmpty() && !attached.contains(Thread.currentThread())) {
            throw new DeviceException(call, CuResult.INVALID_CONTEXT, CuResult.valueOf(CuResult.INVALID_CONTEXT),
                    describe() + " is attached to other threads, not " + Thread.currentThread().getName());
        }
    }

    private void live(String call) {
        if (closed) {
            throw new DeviceException(call, DeviceException.NOT_INITIALIZED,
                    CuResult.valueOf(DeviceException.NOT_INITIALIZED), describe() + " is closed");
        }
    }

    private void spend(DriverCall call) {
        long nanos = latency.drawNanos(call);
        if (nanos > 0) {
            gpu.spend(nanos);
            driverNanos.addAndGet(nanos);
        }
    }

    /** The page id a fault plan sees for a call at {@code address}: its slot in the reserved range. */
    private synchronized long pageOf(long address, long size) {
        ReservedRange range = rangeHolding(address, Math.max(size, 0));
        return range == null || size <= 0 ? Fault.ANY_PAGE : (address - range.address()) / size;
    }

    private ReservedRange rangeHolding(long address, long size) {
        Map.Entry<Long, ReservedRange> e = reservations.floorEntry(address);
        return e != null && e.getValue().contains(address, size) ? e.getValue() : null;
    }

    /** The lowest {@code align}ed address where {@code size} bytes fit in this device's window, or -1. */
    private long firstFit(long size, long align) {
        long candidate = alignUp(windowStart, align);
        for (ReservedRange r : reservations.values()) {
            if (candidate < r.address() && size <= r.address() - candidate) {
                break;
            }
            candidate = Math.max(candidate, alignUp(r.end(), align));
        }
        return candidate < windowEnd && size <= windowEnd - candidate ? candidate : -1;
    }

    private SimHandle liveHandle(DriverCall call, long handle) {
        SimHandle h = handles.get(handle);
        if (h == null || h.released) {
            throw invalid(call, "handle " + handle + (h == null ? " is not a live handle of " + describe() : " was released"));
        }
        return h;
    }

    private void destroy(SimHandle h) {
        handles.remove(h.id);
        h.bytes.discard();
        bytesInUse -= h.size();
        gpu.credit(h.size());
    }

    /** The accessible mappings under {@code [address, address + length)}, in order, or ILLEGAL_ADDRESS. */
    private List<Segment> segments(String call, long address, long length) {
        List<Segment> segments = new ArrayList<>();
        if (length == 0) {
            return segments;
        }
        if (address < 0 || address > Long.MAX_VALUE - length) {
            throw illegalAddress(call, address, length, "outside the address space");
        }
        long cursor = address;
        long end = address + length;
        while (cursor < end) {
            Map.Entry<Long, Mapping> e = mappings.floorEntry(cursor);
            Mapping m = e == null ? null : e.getValue();
            if (m == null || m.end() <= cursor) {
                throw illegalAddress(call, address, length, hex(cursor) + " is not mapped");
            }
            if (!m.accessible) {
                throw illegalAddress(call, address, length, "mapping " + m.view() + " has no access set");
            }
            long n = Math.min(end, m.end()) - cursor;
            segments.add(new Segment(m.handle.bytes, cursor - m.address, n));
            cursor += n;
        }
        return segments;
    }

    private void requireGranules(DriverCall call, String what, long value) {
        if (value <= 0 || value % granularity != 0) {
            throw invalid(call, what + " " + value + " is not a positive multiple of the granularity " + granularity);
        }
    }

    private void requireAligned(DriverCall call, long address) {
        if (address % granularity != 0) {
            throw invalid(call, "address " + hex(address) + " is not aligned to the granularity " + granularity);
        }
    }

    private static long alignUp(long value, long align) {
        return (value + align - 1) & -align;
    }

    private static DeviceException invalid(DriverCall call, String detail) {
        return error(call, DeviceException.INVALID_VALUE, detail);
    }

    private static DeviceException error(DriverCall call, String name, String detail) {
        return new DeviceException(call.driverName(), name, CuResult.valueOf(name), detail);
    }

    private static DeviceException illegalAddress(String call, long address, long length, String why) {
        return new DeviceException(call, DeviceException.ILLEGAL_ADDRESS, CuResult.valueOf(DeviceException.ILLEGAL_ADDRESS),
                hex(address) + "+" + length + ": " + why);
    }

    static String hex(long address) {
        return "0x" + Long.toHexString(address);
    }

    /** A live mapping; {@link MappedRange} is its outside view. */
    private static final class Mapping {
        final long address;
        final long size;
        final SimHandle handle;
        boolean accessible;

        Mapping(long address, long size, SimHandle handle) {
            this.address = address;
            this.size = size;
            this.handle = handle;
        }

        long end() {
            return address + size;
        }

        MappedRange view() {
            return new MappedRange(address, size, handle.id, accessible);
        }
    }

    /** Part of a copy that falls in one mapping. */
    private record Segment(SparseBytes bytes, long offset, long length) {
    }
}
