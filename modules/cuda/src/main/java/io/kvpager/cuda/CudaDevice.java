package io.kvpager.cuda;

import static java.lang.foreign.ValueLayout.JAVA_BYTE;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

import io.kvpager.spi.Device;
import io.kvpager.spi.DeviceException;
import io.kvpager.spi.MemoryInfo;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.Map;

/**
 * One GPU through the CUDA driver, for one rank: its primary context (retained once at open,
 * released at close) and the reservations, handles and mappings this rank made in it.
 *
 * <p>Every call but {@link #describe()} and {@link #close()} must come from the thread that last
 * called {@link #attach()}, which made the context current there; another thread gets an
 * {@link IllegalStateException} rather than a driver call in the wrong context.
 * {@link #close()} makes the context current on its own thread, so a stopping worker may close
 * the device from anywhere once its thread is done with it.
 */
final class CudaDevice implements Device {

    private final int device;
    private final String description;
    private final MemorySegment context;
    /** The structs and out-slots every call reuses; lives from open to close. */
    private final Arena arena;
    private final MemorySegment prop;
    private final MemorySegment access;
    private final MemorySegment out;
    private final Holdings holdings = new Holdings();

    private Thread owner;
    private boolean closed;
    private long granularity;

    private CudaDevice(int device, String description, MemorySegment context, Arena arena) {
        this.device = device;
        this.description = description;
        this.context = context;
        this.arena = arena;
        this.prop = AllocationProp.pinnedOn(arena, device);
        this.access = AccessDesc.readWriteOn(arena, device);
        this.out = arena.allocate(JAVA_LONG, 2);
    }

    /**
     * Opens GPU {@code ordinal}: retains its primary context (creating it if no one holds it yet).
     * The caller has checked that the driver is available.
     */
    static CudaDevice open(int ordinal, String rank) {
        Arena arena = Arena.ofShared();
        try {
            MemorySegment slot = arena.allocate(JAVA_LONG, 2);
            CudaDriver.init();
            int count = CudaDriver.deviceCount(slot);
            if (ordinal >= count) {
                throw new IllegalArgumentException("no CUDA device " + ordinal + ": the driver sees " + count
                        + " (ordinals 0.." + (count - 1) + ")");
            }
            int device = CudaDriver.deviceGet(slot, ordinal);
            String name = CudaDriver.deviceName(device);
            MemorySegment context = CudaDriver.primaryCtxRetain(slot, device);
            return new CudaDevice(device, "cuda:" + ordinal + " " + name + " " + rank, context, arena);
        } catch (RuntimeException e) {
            arena.close();
            throw e;
        }
    }

    @Override
    public String describe() {
        return description;
    }

    @Override
    public void attach() {
        requireOpen("cuCtxSetCurrent");
        CudaDriver.ctxSetCurrent(context);
        owner = Thread.currentThread();
    }

    @Override
    public long granularity() {
        requireAttached("cuMemGetAllocationGranularity");
        if (granularity == 0) {
            granularity = CudaDriver.memGetAllocationGranularity(out, prop);
        }
        return granularity;
    }

    @Override
    public long reserve(long size, long alignment) {
        requireAttached("cuMemAddressReserve");
        requirePositive("size", size);
        if (alignment < 0) {
            throw new IllegalArgumentException("alignment must be 0 (the default) or positive, got " + alignment);
        }
        long address = CudaDriver.memAddressReserve(out, size, alignment);
        holdings.reserved(address, size);
        return address;
    }

    @Override
    public void free(long address, long size) {
        requireAttached("cuMemAddressFree");
        holdings.checkFree(address, size);
        CudaDriver.memAddressFree(address, size);
        holdings.freed(address);
    }

    @Override
    public long create(long size) {
        requireAttached("cuMemCreate");
        requirePositive("size", size);
        long handle = CudaDriver.memCreate(out, size, prop);
        holdings.created(handle, size);
        return handle;
    }

    @Override
    public void release(long handle) {
        requireAttached("cuMemRelease");
        holdings.checkLive("cuMemRelease", handle);
        CudaDriver.memRelease(handle);
        holdings.released(handle);
    }

    @Override
    public void map(long address, long size, long handle) {
        requireAttached("cuMemMap");
        requirePositive("size", size);
        holdings.checkLive("cuMemMap", handle);
        CudaDriver.memMap(address, size, 0L, handle);
        holdings.mapped(address, size, handle);
    }

    @Override
    public void setAccess(long address, long size) {
        requireAttached("cuMemSetAccess");
        requirePositive("size", size);
        CudaDriver.memSetAccess(address, size, access);
        holdings.accessGranted(address, size);
    }

    @Override
    public void unmap(long address, long size) {
        requireAttached("cuMemUnmap");
        holdings.checkUnmap(address, size);
        CudaDriver.memUnmap(address, size);
        holdings.unmapped(address);
    }

    @Override
    public void synchronize() {
        requireAttached("cuCtxSynchronize");
        CudaDriver.ctxSynchronize();
    }

    @Override
    public MemoryInfo memoryInfo() {
        requireAttached("cuMemGetInfo");
        return CudaDriver.memGetInfo(out);
    }

    @Override
    public void write(long address, byte[] bytes) {
        requireAttached("cuMemcpyHtoD");
        if (bytes.length == 0) {
            return;
        }
        holdings.checkAccessible("cuMemcpyHtoD", address, bytes.length);
        try (Arena call = Arena.ofConfined()) {
            MemorySegment host = call.allocate(bytes.length);
            MemorySegment.copy(bytes, 0, host, JAVA_BYTE, 0, bytes.length);
            CudaDriver.memcpyHtoD(address, host, bytes.length);
        }
    }

    @Override
    public byte[] read(long address, int length) {
        requireAttached("cuMemcpyDtoH");
        if (length < 0) {
            throw new IllegalArgumentException("length must not be negative, got " + length);
        }
        if (length == 0) {
            return new byte[0];
        }
        holdings.checkAccessible("cuMemcpyDtoH", address, length);
        try (Arena call = Arena.ofConfined()) {
            MemorySegment host = call.allocate(length);
            CudaDriver.memcpyDtoH(host, address, length);
            return host.toArray(JAVA_BYTE);
        }
    }

    @Override
    public void fill(long address, long size, byte value) {
        requireAttached("cuMemsetD8");
        if (size < 0) {
            throw new IllegalArgumentException("size must not be negative, got " + size);
        }
        if (size == 0) {
            return;
        }
        holdings.checkAccessible("cuMemsetD8", address, size);
        CudaDriver.memsetD8(address, value, size);
    }

    /**
     * Unmaps every mapping, releases every handle and frees every reservation this device still
     * holds, then releases the primary context. Every step is tried even when an earlier one
     * fails; the first failure is thrown at the end with the others suppressed. A second close
     * does nothing.
     */
    @Override
    public void close() {
        if (closed) {
            return;
        }
        closed = true;
        owner = null;
        DeviceException first = null;
        try {
            CudaDriver.ctxSetCurrent(context);
            // No copy or fill may still run on memory about to be unmapped.
            CudaDriver.ctxSynchronize();
        } catch (DeviceException e) {
            first = e;
        }
        for (Holdings.Mapping m : holdings.mappings()) {
            first = attempt(first, () -> CudaDriver.memUnmap(m.address(), m.size()));
        }
        for (long handle : holdings.handles().keySet()) {
            first = attempt(first, () -> CudaDriver.memRelease(handle));
        }
        for (Map.Entry<Long, Long> r : holdings.reservations().entrySet()) {
            first = attempt(first, () -> CudaDriver.memAddressFree(r.getKey(), r.getValue()));
        }
        holdings.clear();
        first = attempt(first, () -> CudaDriver.primaryCtxRelease(device));
        arena.close();
        if (first != null) {
            throw first;
        }
    }

    /** What this device holds from the driver now; all zero once closed. */
    Holdings.Counts held() {
        return holdings.counts();
    }

    @Override
    public String toString() {
        return description;
    }

    private static DeviceException attempt(DeviceException first, Runnable step) {
        try {
            step.run();
            return first;
        } catch (DeviceException e) {
            if (first == null) {
                return e;
            }
            first.addSuppressed(e);
            return first;
        }
    }

    private void requireOpen(String call) {
        if (closed) {
            throw new DeviceException(call, DeviceException.NOT_INITIALIZED, CudaDriver.CUDA_ERROR_NOT_INITIALIZED,
                    description + " is closed");
        }
    }

    private void requireAttached(String call) {
        requireOpen(call);
        Thread current = Thread.currentThread();
        if (owner != current) {
            throw new IllegalStateException(description + (owner == null ? " is not attached to any thread"
                    : " is attached to thread '" + owner.getName() + "'") + ", not to '" + current.getName()
                    + "': call attach() on this thread before " + call);
        }
    }

    private static void requirePositive(String what, long value) {
        if (value <= 0) {
            throw new IllegalArgumentException(what + " must be positive, got " + value);
        }
    }
}
