package io.kvpager.cuda;

import static java.lang.foreign.ValueLayout.JAVA_LONG;

import io.kvpager.Geometry;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;

/**
 * The floor kvpager's map path is measured against: the same page ids of the same geometry mapped
 * and unmapped straight through the driver, on one thread, with no bookkeeping, no messages and no
 * handle pool. For {@code ranks > 1} every rank's tensors live on the same GPU and are mapped one
 * rank after another, since the driver serializes VMM calls on one GPU anyway (measured on an H200: spreading
 * a map over threads is no faster).
 *
 * <p>Per page id and rank: {@code cuMemCreate}, {@code cuMemMap}, {@code cuMemSetAccess} for each
 * handle, then one {@code cuCtxSynchronize} per batch; unmapping synchronizes first, then
 * {@code cuMemUnmap} and {@code cuMemRelease} each handle — what a worker does.
 *
 * <p>Confined to the thread that opened it.
 */
public final class RawPageLoop implements AutoCloseable {

    private final Geometry geometry;
    private final int ranks;
    private final int device;
    private final MemorySegment context;
    private final Arena arena = Arena.ofConfined();
    private final MemorySegment prop;
    private final MemorySegment access;
    private final MemorySegment out;
    /** [rank][range] base addresses of the reserved ranges. */
    private final long[][] bases;
    /** [rank][page][handle] handles of mapped pages, 0 where unmapped. */
    private final long[][][] handles;

    private RawPageLoop(int ordinal, Geometry geometry, int ranks) {
        this.geometry = geometry;
        this.ranks = ranks;
        this.out = arena.allocate(JAVA_LONG, 2);
        CudaDriver.init();
        this.device = CudaDriver.deviceGet(out, ordinal);
        this.context = CudaDriver.primaryCtxRetain(out, device);
        CudaDriver.ctxSetCurrent(context);
        this.prop = AllocationProp.pinnedOn(arena, device);
        this.access = AccessDesc.readWriteOn(arena, device);
        geometry.requireGranularity(CudaDriver.memGetAllocationGranularity(out, prop));
        int ranges = geometry.handlesPerPageId();
        this.bases = new long[ranks][ranges];
        this.handles = new long[ranks][geometry.pages()][ranges];
        for (int r = 0; r < ranks; r++) {
            for (int t = 0; t < ranges; t++) {
                bases[r][t] = CudaDriver.memAddressReserve(out, geometry.rangeBytes(), 0);
            }
        }
    }

    /** Opens GPU {@code ordinal} and reserves {@code ranks} sets of the geometry's ranges on it. */
    public static RawPageLoop open(int ordinal, Geometry geometry, int ranks) {
        if (ranks < 1) {
            throw new IllegalArgumentException("ranks must be at least 1, got " + ranks);
        }
        CudaDriver.unavailableCause().ifPresent(cause -> {
            throw cause;
        });
        return new RawPageLoop(ordinal, geometry, ranks);
    }

    /** Maps page ids {@code first .. first+count-1} on every rank; returns the nanoseconds it took. */
    public long map(int first, int count) {
        checkRange(first, count);
        long size = geometry.handleBytes();
        long start = System.nanoTime();
        for (int r = 0; r < ranks; r++) {
            for (int p = first; p < first + count; p++) {
                long[] pageHandles = handles[r][p];
                for (int t = 0; t < pageHandles.length; t++) {
                    long address = bases[r][t] + p * size;
                    long handle = CudaDriver.memCreate(out, size, prop);
                    CudaDriver.memMap(address, size, 0L, handle);
                    CudaDriver.memSetAccess(address, size, access);
                    pageHandles[t] = handle;
                }
            }
        }
        CudaDriver.ctxSynchronize();
        return System.nanoTime() - start;
    }

    /** Unmaps page ids {@code first .. first+count-1} on every rank; returns the nanoseconds it took. */
    public long unmap(int first, int count) {
        checkRange(first, count);
        long size = geometry.handleBytes();
        long start = System.nanoTime();
        CudaDriver.ctxSynchronize();
        for (int r = 0; r < ranks; r++) {
            for (int p = first; p < first + count; p++) {
                long[] pageHandles = handles[r][p];
                for (int t = 0; t < pageHandles.length; t++) {
                    CudaDriver.memUnmap(bases[r][t] + p * size, size);
                    CudaDriver.memRelease(pageHandles[t]);
                    pageHandles[t] = 0;
                }
            }
        }
        return System.nanoTime() - start;
    }

    private void checkRange(int first, int count) {
        if (first < 0 || count < 1 || first + count > geometry.pages()) {
            throw new IllegalArgumentException("page ids " + first + ".." + (first + count - 1)
                    + " are outside 0.." + (geometry.pages() - 1));
        }
    }

    /** Unmaps and releases whatever is still mapped, frees the ranges, releases the context. */
    @Override
    public void close() {
        try {
            CudaDriver.ctxSetCurrent(context);
            CudaDriver.ctxSynchronize();
            long size = geometry.handleBytes();
            for (int r = 0; r < ranks; r++) {
                for (int p = 0; p < geometry.pages(); p++) {
                    for (int t = 0; t < handles[r][p].length; t++) {
                        if (handles[r][p][t] != 0) {
                            CudaDriver.memUnmap(bases[r][t] + p * size, size);
                            CudaDriver.memRelease(handles[r][p][t]);
                            handles[r][p][t] = 0;
                        }
                    }
                }
                for (long base : bases[r]) {
                    CudaDriver.memAddressFree(base, geometry.rangeBytes());
                }
            }
        } finally {
            CudaDriver.primaryCtxRelease(device);
            arena.close();
        }
    }
}
