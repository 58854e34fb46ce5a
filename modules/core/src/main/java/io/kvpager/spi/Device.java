package io.kvpager.spi;

/**
 * One GPU as the CUDA virtual memory API sees it, for one rank.
 *
 * <p>The calls mirror the driver's ({@code cuMemAddressReserve}, {@code cuMemCreate},
 * {@code cuMemMap}, {@code cuMemSetAccess}, {@code cuMemUnmap}, {@code cuMemRelease}) and keep its
 * rules: sizes are multiples of {@link #granularity()}, a handle is always mapped from its offset
 * 0, a mapping may not overlap another, and releasing a handle that is still mapped defers the
 * physical release until its last mapping is gone. Every failure is a {@link DeviceException}
 * carrying the driver's error name.
 *
 * <p>A device is confined to one thread: the rank's worker thread calls {@link #attach()} once and
 * makes every later call from that thread.
 */
public interface Device extends AutoCloseable {

    /** A short human description, e.g. {@code "cuda:0 NVIDIA H200"} or {@code "sim:0 pp0/tp1"}. */
    String describe();

    /** Makes this device's context current on the calling thread. */
    void attach();

    /** The minimum size and alignment of a physical allocation, in bytes. */
    long granularity();

    /** Reserves {@code size} bytes of virtual address space aligned to {@code alignment}. */
    long reserve(long size, long alignment);

    /** Frees a virtual range reserved by {@link #reserve}; nothing may be mapped in it. */
    void free(long address, long size);

    /** Creates a physical allocation of {@code size} bytes and returns its handle. */
    long create(long size);

    /** Releases a handle; the memory goes back once the handle's last mapping is unmapped. */
    void release(long handle);

    /** Maps the whole of {@code handle} (offset 0, {@code size} bytes) at {@code address}. */
    void map(long address, long size, long handle);

    /** Grants this device read and write access to a mapped range. */
    void setAccess(long address, long size);

    /** Unmaps a range that was mapped by one {@link #map} call. */
    void unmap(long address, long size);

    /** Waits until all work queued on the device has finished. */
    void synchronize();

    /** Free and total device memory, as {@code cuMemGetInfo} reports it. */
    MemoryInfo memoryInfo();

    /** Copies {@code bytes} from the host into mapped device memory at {@code address}. */
    void write(long address, byte[] bytes);

    /** Copies {@code length} bytes of mapped device memory at {@code address} to the host. */
    byte[] read(long address, int length);

    /** Sets {@code size} bytes of mapped device memory at {@code address} to {@code value}. */
    void fill(long address, long size, byte value);

    /** Gives back everything this device still holds; calls after close fail. */
    @Override
    void close();
}
