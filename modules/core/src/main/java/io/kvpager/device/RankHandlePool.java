package io.kvpager.device;

import io.kvpager.spi.Device;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * The physical handles of one rank that no page holds right now, shared by the rank's groups:
 * {@code map} takes handles from here (creating one only on a miss) and {@code unmap} gives them
 * back, so that {@code cuMemCreate} and {@code cuMemRelease} leave the map path while pages come
 * and go.
 *
 * <p>Each handle size has its own {@link HandlePool}, bounded by the sum of what the groups of that
 * size allow ({@link HandlePoolOptions#boundHandles}): a group of small {@code PER_LAYER} handles
 * cannot fill the rank with idle compound handles of a {@code PAGE_MAJOR} group, nor the other way
 * round. A group {@link #join joins} when its tensors are created and {@link #leave leaves} when
 * they are destroyed; the bound shrinks with it and the surplus is released at once, so a rank with
 * no groups holds no idle handle.
 *
 * <p>Idle handles hold physical memory. The device reports it as used, and a rank worker's
 * {@code stats} shows it as {@code pooledHandles} and {@code pooledBytes}; the coordinator's
 * accounting must count it as used, never as free memory another pool could map.
 *
 * <p>Confined to the rank's thread, like its {@link Device}.
 */
public final class RankHandlePool implements AutoCloseable {

    private final Device device;
    private final Map<Long, HandlePool> bySize = new TreeMap<>();

    public RankHandlePool(Device device) {
        this.device = device;
    }

    /**
     * Adds a group's bound for handles of {@code size} bytes and creates {@code prefill} handles
     * idle on top of those already idle. All or nothing: when a create fails, the handles this call
     * created are released again and the bound is what it was before.
     *
     * @throws IllegalArgumentException when the rank's bound for that size would overflow
     * @throws io.kvpager.spi.DeviceException what the failed create threw (out of memory: a 507)
     */
    public void join(long size, int bound, int prefill) {
        HandlePool pool = pool(size);
        int boundBefore = pool.bound();
        int idleBefore = pool.idle();
        if ((long) boundBefore + bound > Integer.MAX_VALUE) {
            throw new IllegalArgumentException("the rank already keeps up to " + boundBefore + " idle handles of " + size
                    + " bytes; " + bound + " more is more than it counts");
        }
        pool.setBound(boundBefore + bound);
        try {
            pool.prefill(size, idleBefore + prefill);
        } catch (RuntimeException e) {
            try {
                pool.trim(idleBefore);
                pool.setBound(boundBefore);
            } catch (RuntimeException undo) {
                e.addSuppressed(undo);
            }
            forgetIfUnused(size);
            throw e;
        }
    }

    /**
     * Takes a group's bound away again, releasing the idle handles of {@code size} bytes above the
     * bound that remains.
     *
     * @throws io.kvpager.spi.DeviceException when a release fails; the bound is lowered all the
     *     same, and the handle stays idle until a later trim, leave or {@link #close} releases it
     */
    public void leave(long size, int bound) {
        HandlePool pool = pool(size);
        try {
            pool.setBound(Math.max(0, pool.bound() - bound));
        } finally {
            forgetIfUnused(size);
        }
    }

    /** A handle of {@code size} bytes: an idle one, or a new one when none is idle. */
    public long take(long size) {
        return pool(size).take(size);
    }

    /**
     * Gives back a handle of {@code size} bytes that {@link #take} handed out and no page maps any
     * more: kept idle under the bound, released above it.
     *
     * @throws io.kvpager.spi.DeviceException when the release fails; the handle is then still the
     *     caller's, to give back again later
     */
    public void give(long size, long handle) {
        pool(size).give(handle);
    }

    /** Idle handles of {@code size} bytes. */
    public int idle(long size) {
        HandlePool pool = bySize.get(size);
        return pool == null ? 0 : pool.idle();
    }

    /**
     * Releases idle handles of {@code size} bytes until at most {@code keep} are idle: how a failed
     * batch gives back what it created, so that the device holds what it held before the batch.
     */
    public void trim(long size, int keep) {
        HandlePool pool = bySize.get(size);
        if (pool != null) {
            pool.trim(keep);
        }
    }

    /**
     * Releases the idle handles of {@code size} bytes above the pool's bound, those a failed
     * release left behind included.
     *
     * @throws io.kvpager.spi.DeviceException when a release fails; that handle stays idle
     */
    public void trimToBound(long size) {
        HandlePool pool = bySize.get(size);
        if (pool != null) {
            pool.trim(pool.bound());
        }
    }

    /** Idle handles of every size. */
    public int idleHandles() {
        int idle = 0;
        for (HandlePool pool : bySize.values()) {
            idle += pool.idle();
        }
        return idle;
    }

    /** Device bytes the idle handles hold. */
    public long idleBytes() {
        long bytes = 0;
        for (HandlePool pool : bySize.values()) {
            bytes += pool.idleBytes();
        }
        return bytes;
    }

    /** One line per handle size, smallest first. */
    public List<SizeStats> sizes() {
        List<SizeStats> sizes = new ArrayList<>(bySize.size());
        bySize.forEach((size, pool) -> sizes.add(new SizeStats(size, pool.idle(), pool.bound(), pool.lent(), pool.creates(),
                pool.reuses(), pool.releases())));
        return sizes;
    }

    /**
     * The pool of one handle size.
     *
     * @param handleBytes the size of its handles
     * @param idle handles idle now
     * @param bound the most idle handles it keeps: the sum of its groups' bounds
     * @param lent handles taken and not given back
     * @param creates handles created, by a take that found none idle or by a prefill
     * @param reuses takes served by an idle handle
     * @param releases handles released
     */
    public record SizeStats(long handleBytes, int idle, int bound, int lent, long creates, long reuses, long releases) {
    }

    /**
     * Releases every idle handle; handles still lent are left to the device's close. Every size
     * is tried; the first failure is thrown.
     */
    @Override
    public void close() {
        RuntimeException first = null;
        for (HandlePool pool : bySize.values()) {
            try {
                pool.close();
            } catch (RuntimeException e) {
                if (first == null) {
                    first = e;
                } else {
                    first.addSuppressed(e);
                }
            }
        }
        bySize.clear();
        if (first != null) {
            throw first;
        }
    }

    private HandlePool pool(long size) {
        return bySize.computeIfAbsent(size, s -> new HandlePool(device, 0));
    }

    /** Drops the pool of a size no group uses and no handle is out of, so stats list only live sizes. */
    private void forgetIfUnused(long size) {
        HandlePool pool = bySize.get(size);
        if (pool != null && pool.bound() == 0 && pool.idle() == 0 && pool.lent() == 0) {
            pool.close();
            bySize.remove(size);
        }
    }
}
