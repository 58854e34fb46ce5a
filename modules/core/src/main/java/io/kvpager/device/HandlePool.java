package io.kvpager.device;

import io.kvpager.spi.Device;
import java.util.ArrayDeque;
import java.util.HashMap;
import java.util.Map;
import java.util.Objects;

/**
 * Physical handles made before they are needed, so that mapping a page id does not wait for
 * {@code cuMemCreate}. A {@code PER_LAYER} page id maps {@code layers × kvBuffers} handles, and
 * creating them costs about as much again as mapping them; taking them from here leaves only map
 * and set-access on the allocation path. Works over any {@link Device}.
 *
 * <p>{@link #take} hands out an idle handle of the asked size, or creates one;
 * {@link #give} takes a handle back (unmapped, or still mapped: the device defers a mapped
 * handle's release) and keeps it while fewer than {@code bound} handles are idle, releasing it
 * otherwise. Idle handles hold device memory that other pools could use, which is what the bound
 * limits. A create that fails leaves the pool as it was and surfaces the device's
 * {@link io.kvpager.spi.DeviceException} ({@code CUDA_ERROR_OUT_OF_MEMORY} when the GPU is full).
 *
 * <p>Confined to the device's thread, like the device.
 */
public final class HandlePool implements AutoCloseable {

    private final Device device;
    private int bound;
    /** Idle handles by size; the most recently given is taken first. */
    private final Map<Long, ArrayDeque<Long>> idleBySize = new HashMap<>();
    /** Handles out of the pool, by handle, with their sizes. */
    private final Map<Long, Long> lent = new HashMap<>();
    private int idle;
    private long idleBytes;
    private boolean closed;
    private long creates;
    private long reuses;
    private long releases;

    /**
     * @param bound the most idle handles kept; 0 keeps none (every give releases)
     */
    public HandlePool(Device device, int bound) {
        this.device = Objects.requireNonNull(device, "device");
        if (bound < 0) {
            throw new IllegalArgumentException("bound must be 0 or more idle handles, got " + bound);
        }
        this.bound = bound;
    }

    /** An idle handle of {@code size} bytes, or a new one; the caller owns it until {@link #give}. */
    public long take(long size) {
        requirePositive(size);
        if (closed) {
            throw new IllegalStateException("the handle pool of " + device.describe() + " is closed");
        }
        ArrayDeque<Long> same = idleBySize.get(size);
        long handle;
        if (same != null && !same.isEmpty()) {
            handle = same.pop();
            idle--;
            idleBytes -= size;
            reuses++;
        } else {
            handle = device.create(size);
            creates++;
        }
        lent.put(handle, size);
        return handle;
    }

    /**
     * Takes back a handle that {@link #take} handed out: kept idle while under the bound (and the
     * pool is open), released otherwise.
     *
     * @throws IllegalArgumentException for a handle this pool did not hand out, or one already
     *     given back; nothing changes
     */
    public void give(long handle) {
        Long size = lent.get(handle);
        if (size == null) {
            throw new IllegalArgumentException("handle 0x" + Long.toHexString(handle)
                    + " was not taken from this pool, or was given back already");
        }
        if (!closed && idle < bound) {
            lent.remove(handle);
            idleBySize.computeIfAbsent(size, s -> new ArrayDeque<>()).push(handle);
            idle++;
            idleBytes += size;
            return;
        }
        device.release(handle);
        lent.remove(handle);
        releases++;
    }

    /**
     * Creates handles of {@code size} bytes until {@code n} of that size are idle. Creating stops
     * at the first failure, which is thrown; the handles made before it stay idle.
     *
     * @return how many handles were created
     * @throws IllegalArgumentException when that many idle handles would exceed the bound
     */
    public int prefill(long size, int n) {
        requirePositive(size);
        if (n < 0) {
            throw new IllegalArgumentException("n must be 0 or more handles, got " + n);
        }
        if (closed) {
            throw new IllegalStateException("the handle pool of " + device.describe() + " is closed");
        }
        int have = idle(size);
        int missing = Math.max(0, n - have);
        if (idle + missing > bound) {
            throw new IllegalArgumentException("prefilling " + n + " idle handles of " + size + " bytes would hold "
                    + (idle + missing) + " idle handles, over this pool's bound of " + bound);
        }
        ArrayDeque<Long> same = idleBySize.computeIfAbsent(size, s -> new ArrayDeque<>());
        for (int i = 0; i < missing; i++) {
            same.push(device.create(size));
            creates++;
            idle++;
            idleBytes += size;
        }
        return missing;
    }

    /**
     * Changes the most idle handles kept, releasing idle handles above a lower bound now (see
     * {@link #trim}). Lets an owner whose demand changes, such as a rank whose groups come and go,
     * keep one pool.
     *
     * @return how many idle handles were released
     * @throws IllegalArgumentException for a negative bound; nothing changes
     */
    public int setBound(int bound) {
        if (bound < 0) {
            throw new IllegalArgumentException("bound must be 0 or more idle handles, got " + bound);
        }
        this.bound = bound;
        return trim(bound);
    }

    /**
     * Releases idle handles, the longest idle first, until at most {@code keep} are idle. Gives
     * memory back without changing the bound, e.g. to undo a batch's creates after it failed.
     * A release that fails leaves that handle idle and is thrown; the ones before it stay released.
     *
     * @return how many idle handles were released
     */
    public int trim(int keep) {
        if (keep < 0) {
            throw new IllegalArgumentException("keep must be 0 or more idle handles, got " + keep);
        }
        int released = 0;
        for (Map.Entry<Long, ArrayDeque<Long>> e : idleBySize.entrySet()) {
            ArrayDeque<Long> same = e.getValue();
            while (idle > keep && !same.isEmpty()) {
                // the deque's tail was given longest ago; takes come from its head
                device.release(same.peekLast());
                same.removeLast();
                idle--;
                idleBytes -= e.getKey();
                releases++;
                released++;
            }
        }
        return released;
    }

    /**
     * Releases every idle handle; handles still lent stay their holders' and are released when
     * given back. Later takes fail. Every release is tried; the first failure is thrown.
     */
    @Override
    public void close() {
        if (closed) {
            return;
        }
        closed = true;
        RuntimeException first = null;
        for (Map.Entry<Long, ArrayDeque<Long>> e : idleBySize.entrySet()) {
            for (long handle : e.getValue()) {
                try {
                    device.release(handle);
                    releases++;
                } catch (RuntimeException failure) {
                    if (first == null) {
                        first = failure;
                    } else {
                        first.addSuppressed(failure);
                    }
                }
            }
        }
        idleBySize.clear();
        idle = 0;
        idleBytes = 0;
        if (first != null) {
            throw first;
        }
    }

    /** Idle handles of every size. */
    public int idle() {
        return idle;
    }

    /** Idle handles of {@code size} bytes. */
    public int idle(long size) {
        ArrayDeque<Long> same = idleBySize.get(size);
        return same == null ? 0 : same.size();
    }

    /** Device bytes held by idle handles. */
    public long idleBytes() {
        return idleBytes;
    }

    /** Handles taken and not yet given back. */
    public int lent() {
        return lent.size();
    }

    public int bound() {
        return bound;
    }

    /** Handles this pool created, by {@link #take} or {@link #prefill}. */
    public long creates() {
        return creates;
    }

    /** Takes served from idle handles, without a create. */
    public long reuses() {
        return reuses;
    }

    /** Handles this pool released. */
    public long releases() {
        return releases;
    }

    private static void requirePositive(long size) {
        if (size <= 0) {
            throw new IllegalArgumentException("a handle size must be positive, got " + size);
        }
    }
}
