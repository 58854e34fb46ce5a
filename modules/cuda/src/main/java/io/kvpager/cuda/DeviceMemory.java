package io.kvpager.cuda;

import static java.lang.foreign.ValueLayout.JAVA_BYTE;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;

/**
 * Reads, writes and fills device memory of one GPU through its primary context, from the thread
 * that opened it: what an engine's kernels would do with the addresses of a worker's
 * {@code views}. Verification and tools only; it keeps no record of mappings, so the driver itself
 * decides whether an address is valid ({@code CUDA_ERROR_INVALID_VALUE} or
 * {@code CUDA_ERROR_ILLEGAL_ADDRESS} when it is not).
 *
 * <p>The primary context is shared by everything in the process that uses that GPU, so addresses
 * from a worker in the same process are valid here.
 */
public final class DeviceMemory implements AutoCloseable {

    private final int device;
    private final Arena arena = Arena.ofConfined();

    private DeviceMemory(int ordinal) {
        MemorySegment out = arena.allocate(JAVA_LONG, 2);
        CudaDriver.init();
        this.device = CudaDriver.deviceGet(out, ordinal);
        CudaDriver.ctxSetCurrent(CudaDriver.primaryCtxRetain(out, device));
    }

    /** Retains GPU {@code ordinal}'s primary context and makes it current on this thread. */
    public static DeviceMemory open(int ordinal) {
        CudaDriver.unavailableCause().ifPresent(cause -> {
            throw cause;
        });
        return new DeviceMemory(ordinal);
    }

    public void write(long address, byte[] bytes) {
        try (Arena call = Arena.ofConfined()) {
            MemorySegment host = call.allocate(Math.max(1, bytes.length));
            MemorySegment.copy(bytes, 0, host, JAVA_BYTE, 0, bytes.length);
            CudaDriver.memcpyHtoD(address, host, bytes.length);
        }
    }

    public byte[] read(long address, int length) {
        try (Arena call = Arena.ofConfined()) {
            MemorySegment host = call.allocate(Math.max(1, length));
            CudaDriver.memcpyDtoH(host, address, length);
            return host.asSlice(0, length).toArray(JAVA_BYTE);
        }
    }

    public void fill(long address, long size, byte value) {
        CudaDriver.memsetD8(address, value, size);
    }

    /** Waits for the device to finish its queued work. */
    public void synchronize() {
        CudaDriver.ctxSynchronize();
    }

    @Override
    public void close() {
        try {
            CudaDriver.primaryCtxRelease(device);
        } finally {
            arena.close();
        }
    }
}
