package io.kvpager.impl.worker;

import io.kvpager.spi.Device;
import io.kvpager.spi.MemoryInfo;

import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.Consumer;
import java.util.function.Supplier;

/**
 * A device decorator for tests: records the thread of every call and lets a test act just before
 * a call (throw from it, or send a request while the worker is inside it).
 */
final class WatchedDevice implements Device {

    private final Device device;
    private final Set<String> threads = ConcurrentHashMap.newKeySet();
    private final List<String> calls = new CopyOnWriteArrayList<>();
    private volatile Consumer<String> beforeCall = call -> { };
    private volatile boolean dirtyNewMemory;
    /** Rank thread only: the handle mapped at each address, and the handles mapped once already. */
    private final java.util.Map<Long, Long> mappedHandles = new java.util.HashMap<>();
    private final Set<Long> seenHandles = new java.util.HashSet<>();

    WatchedDevice(Device device) {
        this.device = device;
    }

    /** The names of the threads that made calls. */
    Set<String> threads() {
        return Set.copyOf(threads);
    }

    /** Every call's name, in order. */
    List<String> calls() {
        return List.copyOf(calls);
    }

    /** Runs {@code action} with the call's name before each later call; it may throw to fail the call. */
    void beforeCall(Consumer<String> action) {
        beforeCall = action;
    }

    /**
     * Makes memory behave as {@code cuMemCreate}'s does: a handle's first mapping reads garbage
     * (0xA5) once it is accessible, instead of the sim's zeros.
     */
    void dirtyNewMemory() {
        dirtyNewMemory = true;
    }

    private <T> T call(String name, Supplier<T> body) {
        threads.add(Thread.currentThread().getName());
        calls.add(name);
        beforeCall.accept(name);
        return body.get();
    }

    private void run(String name, Runnable body) {
        call(name, () -> {
            body.run();
            return null;
        });
    }

    @Override
    public String describe() {
        return call("describe", device::describe);
    }

    @Override
    public void attach() {
        run("attach", device::attach);
    }

    @Override
    public long granularity() {
        return call("granularity", device::granularity);
    }

    @Override
    public long reserve(long size, long alignment) {
        return call("reserve", () -> device.reserve(size, alignment));
    }

    @Override
    public void free(long address, long size) {
        run("free", () -> device.free(address, size));
    }

    @Override
    public long create(long size) {
        return call("create", () -> device.create(size));
    }

    @Override
    public void release(long handle) {
        run("release", () -> device.release(handle));
    }

    @Override
    public void map(long address, long size, long handle) {
        run("map", () -> {
            device.map(address, size, handle);
            mappedHandles.put(address, handle);
        });
    }

    @Override
    public void setAccess(long address, long size) {
        run("setAccess", () -> {
            device.setAccess(address, size);
            if (dirtyNewMemory && seenHandles.add(mappedHandles.get(address))) {
                device.fill(address, size, (byte) 0xA5);
            }
        });
    }

    @Override
    public void unmap(long address, long size) {
        run("unmap", () -> {
            device.unmap(address, size);
            mappedHandles.remove(address);
        });
    }

    @Override
    public void synchronize() {
        run("synchronize", device::synchronize);
    }

    @Override
    public MemoryInfo memoryInfo() {
        return call("memoryInfo", device::memoryInfo);
    }

    @Override
    public void write(long address, byte[] bytes) {
        run("write", () -> device.write(address, bytes));
    }

    @Override
    public byte[] read(long address, int length) {
        return call("read", () -> device.read(address, length));
    }

    @Override
    public void fill(long address, long size, byte value) {
        run("fill", () -> device.fill(address, size, value));
    }

    @Override
    public void close() {
        run("close", device::close);
    }
}
