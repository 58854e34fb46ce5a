package io.kvpager.cuda;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_BYTE;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

import io.kvpager.spi.DeviceException;
import io.kvpager.spi.MemoryInfo;
import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemoryLayout;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.SymbolLookup;
import java.lang.invoke.MethodHandle;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.MethodType;
import java.util.LinkedHashSet;
import java.util.Optional;
import java.util.Set;

/**
 * kvpager's one binding of {@code libcuda.so.1} through {@code java.lang.foreign} (the attention module's
 * kernel launches go through JCuda, which loads the same library on the same primary context): a
 * {@code static final} downcall handle per driver entry
 * point (constants to the JIT, so a call costs what it costs from C), and thin wrappers that check
 * every {@code CUresult} where it is returned and turn a failure into a {@link DeviceException}
 * carrying the driver's own error name.
 *
 * <p>The library is opened when this class is first used, never at load of the module, and its
 * absence never fails class initialisation: each handle then throws a {@link DeviceException}
 * and {@link #unavailableReason()} says why. Symbols are the ones {@code cuda.h} binds to
 * ({@code cuMemGetInfo_v2}, {@code cuMemcpyHtoD_v2}, {@code cuDevicePrimaryCtxRelease_v2}, ...).
 *
 * <p>Out-parameters go through a caller-owned scratch segment of at least 16 bytes, so the map
 * path allocates nothing.
 */
final class CudaDriver {

    static final String LIBRARY = "libcuda.so.1";

    static final int CUDA_SUCCESS = 0;
    static final int CUDA_ERROR_INVALID_VALUE = 1;
    static final int CUDA_ERROR_NOT_INITIALIZED = 3;
    static final int CUDA_ERROR_ILLEGAL_ADDRESS = 700;

    /** {@code CU_MEM_ALLOC_GRANULARITY_MINIMUM}. */
    static final int GRANULARITY_MINIMUM = 0;

    private static final Linker LINKER = Linker.nativeLinker();
    private static final String LOAD_FAILURE;
    private static final SymbolLookup CUDA;

    static {
        SymbolLookup lookup;
        String failure = null;
        try {
            // The global arena: the driver stays loaded for the life of the process, since
            // unloading it under a live context is undefined.
            lookup = SymbolLookup.libraryLookup(LIBRARY, Arena.global());
        } catch (IllegalArgumentException e) {
            lookup = name -> Optional.empty();
            failure = LIBRARY + " not found: " + e.getMessage();
        }
        CUDA = lookup;
        LOAD_FAILURE = failure;
    }

    /** Entry points the loaded library lacks (a driver older than the virtual memory API). */
    private static final Set<String> MISSING = new LinkedHashSet<>();

    private static final MethodHandle CU_INIT = downcall("cuInit", JAVA_INT);
    private static final MethodHandle CU_DRIVER_GET_VERSION = downcall("cuDriverGetVersion", ADDRESS);
    private static final MethodHandle CU_DEVICE_GET_COUNT = downcall("cuDeviceGetCount", ADDRESS);
    private static final MethodHandle CU_DEVICE_GET = downcall("cuDeviceGet", ADDRESS, JAVA_INT);
    private static final MethodHandle CU_DEVICE_GET_NAME = downcall("cuDeviceGetName", ADDRESS, JAVA_INT, JAVA_INT);
    private static final MethodHandle CU_DEVICE_PRIMARY_CTX_RETAIN = downcall("cuDevicePrimaryCtxRetain", ADDRESS, JAVA_INT);
    private static final MethodHandle CU_DEVICE_PRIMARY_CTX_RELEASE = downcall("cuDevicePrimaryCtxRelease_v2", JAVA_INT);
    private static final MethodHandle CU_CTX_SET_CURRENT = downcall("cuCtxSetCurrent", ADDRESS);
    private static final MethodHandle CU_CTX_SYNCHRONIZE = downcall("cuCtxSynchronize");
    private static final MethodHandle CU_MEM_GET_ALLOCATION_GRANULARITY =
            downcall("cuMemGetAllocationGranularity", ADDRESS, ADDRESS, JAVA_INT);
    private static final MethodHandle CU_MEM_ADDRESS_RESERVE =
            downcall("cuMemAddressReserve", ADDRESS, JAVA_LONG, JAVA_LONG, JAVA_LONG, JAVA_LONG);
    private static final MethodHandle CU_MEM_ADDRESS_FREE = downcall("cuMemAddressFree", JAVA_LONG, JAVA_LONG);
    private static final MethodHandle CU_MEM_CREATE = downcall("cuMemCreate", ADDRESS, JAVA_LONG, ADDRESS, JAVA_LONG);
    private static final MethodHandle CU_MEM_RELEASE = downcall("cuMemRelease", JAVA_LONG);
    private static final MethodHandle CU_MEM_MAP = downcall("cuMemMap", JAVA_LONG, JAVA_LONG, JAVA_LONG, JAVA_LONG, JAVA_LONG);
    private static final MethodHandle CU_MEM_UNMAP = downcall("cuMemUnmap", JAVA_LONG, JAVA_LONG);
    private static final MethodHandle CU_MEM_SET_ACCESS = downcall("cuMemSetAccess", JAVA_LONG, JAVA_LONG, ADDRESS, JAVA_LONG);
    private static final MethodHandle CU_MEM_GET_INFO = downcall("cuMemGetInfo_v2", ADDRESS, ADDRESS);
    private static final MethodHandle CU_MEMCPY_HTOD = downcall("cuMemcpyHtoD_v2", JAVA_LONG, ADDRESS, JAVA_LONG);
    private static final MethodHandle CU_MEMCPY_DTOH = downcall("cuMemcpyDtoH_v2", ADDRESS, JAVA_LONG, JAVA_LONG);
    private static final MethodHandle CU_MEMSET_D8 = downcall("cuMemsetD8_v2", JAVA_LONG, JAVA_BYTE, JAVA_LONG);
    private static final MethodHandle CU_GET_ERROR_NAME = downcall("cuGetErrorName", JAVA_INT, ADDRESS);

    /** The outcome of opening the driver once per process: null until first asked. */
    private static volatile Probe probe;

    private record Probe(String reason, DeviceException cause) {
    }

    private CudaDriver() {
    }

    /**
     * Why no CUDA device can be opened in this process ({@code "libcuda.so.1 not found: ..."},
     * {@code "no CUDA device: ..."}), or empty when one can. Runs {@code cuInit} the first time.
     */
    static Optional<String> unavailableReason() {
        return Optional.ofNullable(probe().reason());
    }

    /** The driver error behind {@link #unavailableReason()}, when there was one. */
    static Optional<DeviceException> unavailableCause() {
        return Optional.ofNullable(probe().cause());
    }

    private static Probe probe() {
        Probe p = probe;
        if (p == null) {
            synchronized (CudaDriver.class) {
                p = probe;
                if (p == null) {
                    p = runProbe();
                    probe = p;
                }
            }
        }
        return p;
    }

    private static Probe runProbe() {
        if (LOAD_FAILURE != null) {
            return new Probe(LOAD_FAILURE, null);
        }
        if (!MISSING.isEmpty()) {
            return new Probe(LIBRARY + " lacks " + String.join(", ", MISSING)
                    + ": the driver predates the CUDA virtual memory API", null);
        }
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment out = arena.allocate(JAVA_LONG, 2);
            init();
            int count = deviceCount(out);
            return count > 0 ? new Probe(null, null) : new Probe("no CUDA device: the driver reports 0 devices", null);
        } catch (DeviceException e) {
            return new Probe("no CUDA device: " + e.getMessage(), e);
        }
    }

    // --- entry points ------------------------------------------------------------------------

    static void init() {
        int r;
        try {
            r = (int) CU_INIT.invokeExact(0);
        } catch (Throwable t) {
            throw rethrow(t);
        }
        check("cuInit", r, null);
    }

    /** The driver's CUDA version, e.g. 13000 for 13.0. */
    static int driverVersion(MemorySegment out) {
        int r;
        try {
            r = (int) CU_DRIVER_GET_VERSION.invokeExact(out);
        } catch (Throwable t) {
            throw rethrow(t);
        }
        check("cuDriverGetVersion", r, null);
        return out.get(JAVA_INT, 0);
    }

    static int deviceCount(MemorySegment out) {
        int r;
        try {
            r = (int) CU_DEVICE_GET_COUNT.invokeExact(out);
        } catch (Throwable t) {
            throw rethrow(t);
        }
        check("cuDeviceGetCount", r, null);
        return out.get(JAVA_INT, 0);
    }

    static int deviceGet(MemorySegment out, int ordinal) {
        int r;
        try {
            r = (int) CU_DEVICE_GET.invokeExact(out, ordinal);
        } catch (Throwable t) {
            throw rethrow(t);
        }
        check("cuDeviceGet", r, "ordinal " + ordinal);
        return out.get(JAVA_INT, 0);
    }

    static String deviceName(int device) {
        try (Arena arena = Arena.ofConfined()) {
            int capacity = 256;
            MemorySegment name = arena.allocate(capacity);
            int r;
            try {
                r = (int) CU_DEVICE_GET_NAME.invokeExact(name, capacity, device);
            } catch (Throwable t) {
                throw rethrow(t);
            }
            check("cuDeviceGetName", r, "device " + device);
            return name.getString(0);
        }
    }

    static MemorySegment primaryCtxRetain(MemorySegment out, int device) {
        int r;
        try {
            r = (int) CU_DEVICE_PRIMARY_CTX_RETAIN.invokeExact(out, device);
        } catch (Throwable t) {
            throw rethrow(t);
        }
        check("cuDevicePrimaryCtxRetain", r, "device " + device);
        return out.get(ADDRESS, 0);
    }

    static void primaryCtxRelease(int device) {
        int r;
        try {
            r = (int) CU_DEVICE_PRIMARY_CTX_RELEASE.invokeExact(device);
        } catch (Throwable t) {
            throw rethrow(t);
        }
        check("cuDevicePrimaryCtxRelease", r, "device " + device);
    }

    static void ctxSetCurrent(MemorySegment context) {
        int r;
        try {
            r = (int) CU_CTX_SET_CURRENT.invokeExact(context);
        } catch (Throwable t) {
            throw rethrow(t);
        }
        check("cuCtxSetCurrent", r, null);
    }

    static void ctxSynchronize() {
        int r;
        try {
            r = (int) CU_CTX_SYNCHRONIZE.invokeExact();
        } catch (Throwable t) {
            throw rethrow(t);
        }
        check("cuCtxSynchronize", r, null);
    }

    static long memGetAllocationGranularity(MemorySegment out, MemorySegment prop) {
        int r;
        try {
            r = (int) CU_MEM_GET_ALLOCATION_GRANULARITY.invokeExact(out, prop, GRANULARITY_MINIMUM);
        } catch (Throwable t) {
            throw rethrow(t);
        }
        check("cuMemGetAllocationGranularity", r, null);
        return out.get(JAVA_LONG, 0);
    }

    static long memAddressReserve(MemorySegment out, long size, long alignment) {
        int r;
        try {
            r = (int) CU_MEM_ADDRESS_RESERVE.invokeExact(out, size, alignment, 0L, 0L);
        } catch (Throwable t) {
            throw rethrow(t);
        }
        if (r != CUDA_SUCCESS) {
            throw failure("cuMemAddressReserve", r, size + " bytes, alignment " + alignment);
        }
        return out.get(JAVA_LONG, 0);
    }

    static void memAddressFree(long address, long size) {
        int r;
        try {
            r = (int) CU_MEM_ADDRESS_FREE.invokeExact(address, size);
        } catch (Throwable t) {
            throw rethrow(t);
        }
        if (r != CUDA_SUCCESS) {
            throw failure("cuMemAddressFree", r, range(address, size));
        }
    }

    static long memCreate(MemorySegment out, long size, MemorySegment prop) {
        int r;
        try {
            r = (int) CU_MEM_CREATE.invokeExact(out, size, prop, 0L);
        } catch (Throwable t) {
            throw rethrow(t);
        }
        if (r != CUDA_SUCCESS) {
            throw failure("cuMemCreate", r, size + " bytes");
        }
        return out.get(JAVA_LONG, 0);
    }

    static void memRelease(long handle) {
        int r;
        try {
            r = (int) CU_MEM_RELEASE.invokeExact(handle);
        } catch (Throwable t) {
            throw rethrow(t);
        }
        if (r != CUDA_SUCCESS) {
            throw failure("cuMemRelease", r, "handle 0x" + Long.toHexString(handle));
        }
    }

    static void memMap(long address, long size, long offset, long handle) {
        int r;
        try {
            r = (int) CU_MEM_MAP.invokeExact(address, size, offset, handle, 0L);
        } catch (Throwable t) {
            throw rethrow(t);
        }
        if (r != CUDA_SUCCESS) {
            throw failure("cuMemMap", r, range(address, size) + " from offset " + offset
                    + " of handle 0x" + Long.toHexString(handle));
        }
    }

    static void memUnmap(long address, long size) {
        int r;
        try {
            r = (int) CU_MEM_UNMAP.invokeExact(address, size);
        } catch (Throwable t) {
            throw rethrow(t);
        }
        if (r != CUDA_SUCCESS) {
            throw failure("cuMemUnmap", r, range(address, size));
        }
    }

    static void memSetAccess(long address, long size, MemorySegment desc) {
        int r;
        try {
            r = (int) CU_MEM_SET_ACCESS.invokeExact(address, size, desc, 1L);
        } catch (Throwable t) {
            throw rethrow(t);
        }
        if (r != CUDA_SUCCESS) {
            throw failure("cuMemSetAccess", r, range(address, size));
        }
    }

    /** Free and total bytes; {@code out} holds at least two longs. */
    static MemoryInfo memGetInfo(MemorySegment out) {
        int r;
        try {
            r = (int) CU_MEM_GET_INFO.invokeExact(out, out.asSlice(8, 8));
        } catch (Throwable t) {
            throw rethrow(t);
        }
        check("cuMemGetInfo", r, null);
        return new MemoryInfo(out.get(JAVA_LONG, 0), out.get(JAVA_LONG, 8));
    }

    static void memcpyHtoD(long address, MemorySegment host, long bytes) {
        int r;
        try {
            r = (int) CU_MEMCPY_HTOD.invokeExact(address, host, bytes);
        } catch (Throwable t) {
            throw rethrow(t);
        }
        if (r != CUDA_SUCCESS) {
            throw failure("cuMemcpyHtoD", r, range(address, bytes));
        }
    }

    static void memcpyDtoH(MemorySegment host, long address, long bytes) {
        int r;
        try {
            r = (int) CU_MEMCPY_DTOH.invokeExact(host, address, bytes);
        } catch (Throwable t) {
            throw rethrow(t);
        }
        if (r != CUDA_SUCCESS) {
            throw failure("cuMemcpyDtoH", r, range(address, bytes));
        }
    }

    static void memsetD8(long address, byte value, long bytes) {
        int r;
        try {
            r = (int) CU_MEMSET_D8.invokeExact(address, value, bytes);
        } catch (Throwable t) {
            throw rethrow(t);
        }
        if (r != CUDA_SUCCESS) {
            throw failure("cuMemsetD8", r, range(address, bytes));
        }
    }

    /** The driver's name for {@code result}, e.g. {@code CUDA_ERROR_OUT_OF_MEMORY}. */
    static String errorName(int result) {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment out = arena.allocate(ADDRESS);
            int r;
            try {
                r = (int) CU_GET_ERROR_NAME.invokeExact(result, out);
            } catch (Throwable t) {
                return "CUresult " + result;
            }
            MemorySegment name = out.get(ADDRESS, 0);
            if (r != CUDA_SUCCESS || name.equals(MemorySegment.NULL)) {
                return "CUresult " + result;
            }
            return name.reinterpret(256).getString(0);
        }
    }

    // --- plumbing ----------------------------------------------------------------------------

    static String range(long address, long size) {
        return "0x" + Long.toHexString(address) + " + " + size + " bytes";
    }

    private static void check(String call, int result, String detail) {
        if (result != CUDA_SUCCESS) {
            throw failure(call, result, detail);
        }
    }

    private static DeviceException failure(String call, int result, String detail) {
        return new DeviceException(call, errorName(result), result, detail);
    }

    private static RuntimeException rethrow(Throwable t) {
        if (t instanceof RuntimeException e) {
            return e;
        }
        if (t instanceof Error e) {
            throw e;
        }
        return new IllegalStateException(t);
    }

    private static MethodHandle downcall(String symbol, MemoryLayout... arguments) {
        FunctionDescriptor descriptor = FunctionDescriptor.of(JAVA_INT, arguments);
        Optional<MemorySegment> address = CUDA.find(symbol);
        if (address.isPresent()) {
            return LINKER.downcallHandle(address.get(), descriptor);
        }
        if (LOAD_FAILURE == null) {
            MISSING.add(symbol);
        }
        // Same type as the real handle, so callers' invokeExact sites stay valid.
        MethodType type = descriptor.toMethodType();
        MethodHandle thrower = MethodHandles.insertArguments(unavailableHandle(), 0, symbol);
        return MethodHandles.dropArguments(thrower, 0, type.parameterList());
    }

    private static MethodHandle unavailableHandle() {
        try {
            return MethodHandles.lookup().findStatic(CudaDriver.class, "unavailable",
                    MethodType.methodType(int.class, String.class));
        } catch (ReflectiveOperationException e) {
            throw new IllegalStateException(e);
        }
    }

    @SuppressWarnings("unused") // target of the handles for absent symbols
    private static int unavailable(String symbol) {
        throw new DeviceException(symbol, DeviceException.NOT_INITIALIZED, CUDA_ERROR_NOT_INITIALIZED,
                LOAD_FAILURE != null ? LOAD_FAILURE : LIBRARY + " has no " + symbol);
    }
}
