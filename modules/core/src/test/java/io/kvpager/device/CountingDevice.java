package io.kvpager.device;

import io.kvpager.spi.Device;
import io.kvpager.spi.DeviceException;
import io.kvpager.spi.MemoryInfo;
import java.util.HashMap;
import java.util.Map;

/**
 * A device that only creates and releases handles against a fixed capacity, and counts: enough
 * to watch a {@link HandlePool} from outside. Out of capacity it fails as the driver does.
 */
final class CountingDevice implements Device {

    private final long capacity;
    private final Map<Long, Long> live = new HashMap<>();
    private long nextHandle = 0x1000;
    private long used;
    int creates;
    int releases;

    CountingDevice(long capacity) {
        this.capacity = capacity;
    }

    int live() {
        return live.size();
    }

    long used() {
        return used;
    }

    @Override
    public long create(long size) {
        if (used + size > capacity) {
            throw new DeviceException("cuMemCreate", DeviceException.OUT_OF_MEMORY, 2, size + " bytes");
        }
        long handle = nextHandle;
        nextHandle += 0x10;
        live.put(handle, size);
        used += size;
        creates++;
        return handle;
    }

    @Override
    public void release(long handle) {
        Long size = live.remove(handle);
        if (size == null) {
            throw new DeviceException("cuMemRelease", DeviceException.INVALID_VALUE, 1, "unknown handle");
        }
        used -= size;
        releases++;
    }

    @Override
    public MemoryInfo memoryInfo() {
        return new MemoryInfo(capacity - used, capacity);
    }

    @Override
    public String describe() {
        return "counting";
    }

    @Override
    public void attach() {
    }

    @Override
    public long granularity() {
        return 2L << 20;
    }

    @Override
    public long reserve(long size, long alignment) {
        throw new UnsupportedOperationException();
    }

    @Override
    public void free(long address, long size) {
        throw new UnsupportedOperationException();
    }

    @Override
    public void map(long address, long size, long handle) {
        throw new UnsupportedOperationException();
    }

    @Override
    public void setAccess(long address, long size) {
        throw new UnsupportedOperationException();
    }

    @Override
    public void unmap(long address, long size) {
        throw new UnsupportedOperationException();
    }

    @Override
    public void synchronize() {
    }

    @Override
    public void write(long address, byte[] bytes) {
        throw new UnsupportedOperationException();
    }

    @Override
    public byte[] read(long address, int length) {
        throw new UnsupportedOperationException();
    }

    @Override
    public void fill(long address, long size, byte value) {
        throw new UnsupportedOperationException();
    }

    @Override
    public void close() {
    }
}
