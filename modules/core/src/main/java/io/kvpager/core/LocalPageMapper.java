package io.kvpager.core;

import io.kvpager.Geometry;
import io.kvpager.Layout;
import io.kvpager.MissReason;
import io.kvpager.spi.Device;
import io.kvpager.spi.DeviceException;
import java.util.ArrayList;
import java.util.BitSet;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;

/**
 * Maps a pool's page ids on one {@link Device} directly, in the calling thread: the mapper of tests,
 * benchmarks and single-GPU use, and what a rank worker does for each request.
 *
 * <p>It reserves the pool's virtual ranges once: one range for {@link Layout#PAGE_MAJOR}, one per
 * layer and buffer for {@link Layout#PER_LAYER}. Mapping a page id creates, maps and opens access to
 * each of its handles (one compound handle, or {@code layers × kvBuffers}); unmapping unmaps them and
 * releases them. Each batch is all or nothing: a failure undoes what the batch did before it is
 * reported, and a page that cannot be undone is named quarantined in the {@link PageMapFailure}. The
 * device is synchronized after a map, so that mapped pages are visible before their blocks are
 * handed out, and before an unmap, so that no queued kernel reads a page being unmapped.
 *
 * <p>Stages complete before the call returns. The device must be attached to the calling thread,
 * which must be the one thread that uses it.
 */
public final class LocalPageMapper implements PageMapper, AutoCloseable {

    private static final byte NONE = 0;
    private static final byte MAPPED = 1;
    /** Created but not mapped: left by an undo that failed, released on close. */
    private static final byte HELD = 2;

    private final Device device;
    private final Geometry geometry;
    private final int handlesPerPage;
    private final long handleBytes;
    private final long[] ranges;
    private final long[] handle;
    private final byte[] handleState;
    private final BitSet mapped = new BitSet();
    private final BitSet quarantined = new BitSet();
    private boolean closed;

    /**
     * Reserves the pool's virtual ranges on {@code device}.
     *
     * @throws IllegalArgumentException when the geometry's page size is not a multiple of the
     *     device's granularity
     * @throws DeviceException when the device cannot reserve the ranges (none is left reserved)
     */
    public LocalPageMapper(Device device, Geometry geometry) {
        if (device == null || geometry == null) {
            throw new IllegalArgumentException("a local mapper needs a device and a geometry");
        }
        geometry.requireGranularity(device.granularity());
        this.device = device;
        this.geometry = geometry;
        this.handlesPerPage = geometry.handlesPerPageId();
        this.handleBytes = geometry.handleBytes();
        this.ranges = new long[handlesPerPage];
        this.handle = new long[geometry.pages() * handlesPerPage];
        this.handleState = new byte[handle.length];
        int reserved = 0;
        try {
            for (; reserved < ranges.length; reserved++) {
                ranges[reserved] = device.reserve(geometry.rangeBytes(), device.granularity());
            }
        } catch (RuntimeException e) {
            for (int i = reserved - 1; i >= 0; i--) {
                try {
                    device.free(ranges[i], geometry.rangeBytes());
                } catch (RuntimeException undo) {
                    e.addSuppressed(undo);
                }
            }
            throw e;
        }
    }

    public Geometry geometry() {
        return geometry;
    }

    /**
     * Virtual address of range {@code range}: the one compound tensor for PAGE_MAJOR, tensor
     * {@code layer × kvBuffers + buffer} for PER_LAYER.
     */
    public long rangeAddress(int range) {
        return ranges[range];
    }

    /** Virtual ranges reserved: 1 for PAGE_MAJOR, {@code layers × kvBuffers} for PER_LAYER. */
    public int rangeCount() {
        return ranges.length;
    }

    /** Where handle {@code range} of page {@code page} is mapped. */
    public long address(int page, int range) {
        return ranges[range] + page * handleBytes;
    }

    public boolean isMapped(int page) {
        return mapped.get(page);
    }

    public int mappedPages() {
        return mapped.cardinality();
    }

    /** Pages this mapper could not undo and will never map again. */
    public int[] quarantinedPages() {
        return quarantined.stream().toArray();
    }

    @Override
    public CompletionStage<Void> map(int[] pages) {
        String refused = refusal(pages, false);
        if (refused != null) {
            return CompletableFuture.failedFuture(new IllegalArgumentException(refused));
        }
        int done = 0;
        try {
            for (; done < pages.length; done++) {
                mapPage(pages[done]);
            }
            device.synchronize();
        } catch (RuntimeException e) {
            int failedPage = done < pages.length ? pages[done] : -1;
            BitSet lost = new BitSet();
            for (int i = Math.min(done, pages.length - 1); i >= 0; i--) {
                undoMap(pages[i], e, lost);
            }
            return CompletableFuture.failedFuture(failure(failedPage, "map", e, lost));
        }
        for (int page : pages) {
            mapped.set(page);
        }
        return CompletableFuture.completedFuture(null);
    }

    /** Creates, maps and opens each handle of a page; on failure the page is left as far as it got. */
    private void mapPage(int page) {
        int first = page * handlesPerPage;
        for (int h = 0; h < handlesPerPage; h++) {
            long created = device.create(handleBytes);
            handle[first + h] = created;
            handleState[first + h] = HELD;
            long address = address(page, h);
            device.map(address, handleBytes, created);
            handleState[first + h] = MAPPED;
            device.setAccess(address, handleBytes);
        }
    }

    /** Unmaps and releases whatever a page of a failed batch holds; a page that resists is lost. */
    private void undoMap(int page, RuntimeException failure, BitSet lost) {
        int first = page * handlesPerPage;
        for (int h = handlesPerPage - 1; h >= 0; h--) {
            try {
                if (handleState[first + h] == MAPPED) {
                    device.unmap(address(page, h), handleBytes);
                    handleState[first + h] = HELD;
                }
                if (handleState[first + h] == HELD) {
                    device.release(handle[first + h]);
                    handleState[first + h] = NONE;
                }
            } catch (RuntimeException undo) {
                failure.addSuppressed(undo);
                lost.set(page);
            }
        }
        if (lost.get(page)) {
            quarantined.set(page);
        }
    }

    @Override
    public CompletionStage<Void> unmap(int[] pages) {
        String refused = refusal(pages, true);
        if (refused != null) {
            return CompletableFuture.failedFuture(new IllegalArgumentException(refused));
        }
        try {
            device.synchronize();
        } catch (RuntimeException e) {
            return CompletableFuture.failedFuture(failure(-1, "unmap", e, new BitSet()));
        }
        // Unmap every range first, keeping the handles, so that a failure can map them back.
        int page = 0;
        int h = 0;
        try {
            for (; page < pages.length; page++) {
                for (h = 0; h < handlesPerPage; h++) {
                    int index = pages[page] * handlesPerPage + h;
                    device.unmap(address(pages[page], h), handleBytes);
                    handleState[index] = HELD;
                }
            }
        } catch (RuntimeException e) {
            BitSet lost = new BitSet();
            for (int p = page; p >= 0; p--) {
                remap(pages[p], e, lost);
            }
            return CompletableFuture.failedFuture(failure(pages[page], "unmap", e, lost));
        }
        for (int p : pages) {
            mapped.clear(p);
        }
        // The batch is unmapped now; a handle that will not release leaves its page's memory unaccounted.
        RuntimeException releaseFailure = null;
        int failedPage = -1;
        for (int p : pages) {
            for (int i = 0; i < handlesPerPage; i++) {
                int index = p * handlesPerPage + i;
                try {
                    device.release(handle[index]);
                    handleState[index] = NONE;
                } catch (RuntimeException e) {
                    if (releaseFailure == null) {
                        releaseFailure = e;
                        failedPage = p;
                    } else {
                        releaseFailure.addSuppressed(e);
                    }
                }
            }
        }
        if (releaseFailure != null) {
            BitSet lost = new BitSet();
            for (int p : pages) {
                lost.set(p);
                quarantined.set(p);
            }
            return CompletableFuture.failedFuture(failure(failedPage, "unmap", releaseFailure, lost));
        }
        return CompletableFuture.completedFuture(null);
    }

    /** Maps back the handles of a page that a failed unmap batch had unmapped. */
    private void remap(int page, RuntimeException failure, BitSet lost) {
        int first = page * handlesPerPage;
        for (int h = 0; h < handlesPerPage; h++) {
            if (handleState[first + h] != HELD) {
                continue;
            }
            try {
                device.map(address(page, h), handleBytes, handle[first + h]);
                handleState[first + h] = MAPPED;
                device.setAccess(address(page, h), handleBytes);
            } catch (RuntimeException undo) {
                failure.addSuppressed(undo);
                lost.set(page);
            }
        }
        if (lost.get(page)) {
            mapped.clear(page);
            quarantined.set(page);
        }
    }

    /** Why a batch is refused before any device call, or null when it may go ahead. */
    private String refusal(int[] pages, boolean unmapping) {
        if (closed) {
            return device.describe() + ": the mapper is closed";
        }
        if (pages == null || pages.length == 0) {
            return device.describe() + ": a batch needs at least one page";
        }
        BitSet seen = new BitSet();
        for (int page : pages) {
            if (page < 0 || page >= geometry.pages()) {
                return device.describe() + " page " + page + ": out of range 0.." + (geometry.pages() - 1);
            }
            if (seen.get(page)) {
                return device.describe() + " page " + page + ": listed twice";
            }
            seen.set(page);
            if (quarantined.get(page)) {
                return device.describe() + " page " + page + ": quarantined after a failed undo";
            }
            if (mapped.get(page) != unmapping) {
                return device.describe() + " page " + page + (unmapping ? ": not mapped" : ": already mapped");
            }
        }
        return null;
    }

    private PageMapFailure failure(int page, String what, RuntimeException cause, BitSet lost) {
        MissReason reason = cause instanceof DeviceException d && d.isOutOfMemory() ? MissReason.OUT_OF_MEMORY : MissReason.MAP_FAILED;
        String where = page >= 0 ? " page " + page : "";
        String message = device.describe() + where + ": " + cause.getMessage()
                + (lost.isEmpty() ? "" : "; could not undo " + what + " of pages " + lost + ", quarantined");
        return new PageMapFailure(reason, message, lost.stream().toArray(), cause);
    }

    /**
     * Unmaps every mapped page, releases every handle and frees the virtual ranges. Keeps going past
     * failures and throws the first, with the others suppressed.
     */
    @Override
    public void close() {
        if (closed) {
            return;
        }
        closed = true;
        List<RuntimeException> failures = new ArrayList<>();
        attempt(failures, device::synchronize);
        for (int index = 0; index < handle.length; index++) {
            int page = index / handlesPerPage;
            int h = index % handlesPerPage;
            if (handleState[index] == MAPPED) {
                int i = index;
                attempt(failures, () -> {
                    device.unmap(address(page, h), handleBytes);
                    handleState[i] = HELD;
                });
            }
            if (handleState[index] == HELD) {
                int i = index;
                attempt(failures, () -> {
                    device.release(handle[i]);
                    handleState[i] = NONE;
                });
            }
        }
        mapped.clear();
        for (long range : ranges) {
            attempt(failures, () -> device.free(range, geometry.rangeBytes()));
        }
        if (!failures.isEmpty()) {
            RuntimeException first = failures.getFirst();
            failures.stream().skip(1).forEach(first::addSuppressed);
            throw first;
        }
    }

    private static void attempt(List<RuntimeException> failures, Runnable call) {
        try {
            call.run();
        } catch (RuntimeException e) {
            failures.add(e);
        }
    }

    @Override
    public String toString() {
        return "LocalPageMapper[" + device.describe() + ", " + geometry.layout() + ", " + mappedPages() + " of "
                + geometry.pages() + " pages mapped]";
    }
}
