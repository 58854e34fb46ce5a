package io.kvpager.attention;

import io.kvpager.Geometry;
import java.util.List;

/**
 * What one compiled module of {@code paged_decode.cu} is specialised for: the shape, the cache's
 * blocks per page, and the launch's warps per thread block, copy stages per warp, the L2 prefetch
 * hint of each 16-byte copy (0, 64, 128 or 256 bytes), the chunked grid's order (KV heads or
 * splits first), and how tiles arrive (16-byte {@code cp.async} copies, or one bulk copy per row
 * completing on an mbarrier: {@code bulkCopy}, sm_90 and later). Every one becomes a {@code -D}
 * option, so the kernel's loops and divisions are fixed at compile time; the options with the
 * target architecture name a module in the {@link KernelCache}.
 *
 * <p>{@code streamed} chooses the kernel: {@code paged_decode_stream} (one equal range of tiles
 * per thread block, {@link StreamPlan}) or the chunked {@code paged_decode} with its merge pass
 * ({@link SplitPlan}). {@code blocksPerMultiprocessor} sizes the grid, not compiled in except as
 * the streamed kernel's occupancy hint: streamed, the thread blocks per multiprocessor (0: as many
 * as fit); chunked, 0 for whole waves of the thread blocks that fit at once
 * ({@link SplitPlan#waves}), else that many thread blocks per multiprocessor
 * ({@link SplitPlan#of(DecodeBatch, int, int, int)}).
 */
public record KernelOptions(AttentionShape shape, int blocksPerPage, int warps, int stages, int l2Prefetch,
                            boolean headsFirst, int blocksPerMultiprocessor, boolean streamed, boolean bulkCopy) {

    /** Shared memory a thread block may use on the GPUs kvpager targets (sm_80 and later). */
    public static final int MAX_SHARED_BYTES = 227 * 1024;
    /** Warps per thread block by default. */
    public static final int DEFAULT_WARPS = 4;
    /** Copy stages per warp by default, where they fit. */
    public static final int DEFAULT_STAGES = 3;

    public KernelOptions {
        if (blocksPerPage <= 0) {
            throw new IllegalArgumentException("blocksPerPage must be at least 1, got " + blocksPerPage);
        }
        if (warps < 1 || warps > 8) {
            throw new IllegalArgumentException("warps must be 1..8, got " + warps);
        }
        if (stages < 2 || stages > 8) {
            throw new IllegalArgumentException("stages must be 2..8, got " + stages);
        }
        if (l2Prefetch != 0 && l2Prefetch != 64 && l2Prefetch != 128 && l2Prefetch != 256) {
            throw new IllegalArgumentException("l2Prefetch must be 0, 64, 128 or 256 bytes, got " + l2Prefetch);
        }
        if (blocksPerMultiprocessor < 0) {
            throw new IllegalArgumentException("blocksPerMultiprocessor must be 0 (whole waves) or positive, got "
                    + blocksPerMultiprocessor);
        }
        if (bulkCopy && l2Prefetch != 0) {
            throw new IllegalArgumentException("l2Prefetch is a hint of the 16-byte copies; bulk copies take none");
        }
        if (sharedBytes(shape, warps, stages, streamed, bulkCopy) > MAX_SHARED_BYTES) {
            throw new IllegalArgumentException(warps + " warps × " + stages + " stages of head size " + shape.headSize()
                    + " need " + sharedBytes(shape, warps, stages, streamed, bulkCopy) + " bytes of shared memory; at most "
                    + MAX_SHARED_BYTES + " fit");
        }
    }

    /** Chunked options ({@code paged_decode}) with 16-byte copies. */
    public KernelOptions(AttentionShape shape, int blocksPerPage, int warps, int stages, int l2Prefetch, boolean headsFirst,
                         int blocksPerMultiprocessor) {
        this(shape, blocksPerPage, warps, stages, l2Prefetch, headsFirst, blocksPerMultiprocessor, false, false);
    }

    /**
     * The defaults for {@code shape} over a cache of {@code geometry}: the streamed kernel, 4 warps,
     * {@value #DEFAULT_STAGES} copy stages (fewer where the shared memory of a large head size and
     * group does not hold them), bulk copies, as many thread blocks as fit: the fastest launch
     * shape of those the benchmark tried on the H200 (docs/attention.md). Bulk copies need sm_90;
     * {@link #portable} is the same with 16-byte copies.
     */
    public static KernelOptions of(AttentionShape shape, Geometry geometry) {
        shape.requireFits(geometry);
        int stages = DEFAULT_STAGES;
        while (stages > 2 && sharedBytes(shape, DEFAULT_WARPS, stages, true, true) > MAX_SHARED_BYTES) {
            stages--;
        }
        return new KernelOptions(shape, geometry.blocksPerPage(), DEFAULT_WARPS, stages, 0, false, 0, true, true);
    }

    /** The defaults with 16-byte {@code cp.async} copies, for GPUs before sm_90. */
    public KernelOptions portable() {
        return new KernelOptions(shape, blocksPerPage, warps, stages, 0, headsFirst, blocksPerMultiprocessor, streamed, false);
    }

    /** Chunked options ({@code paged_decode}, 16-byte copies) with another launch shape. */
    public KernelOptions with(int warps, int stages, int l2Prefetch, boolean headsFirst, int blocksPerMultiprocessor) {
        return new KernelOptions(shape, blocksPerPage, warps, stages, l2Prefetch, headsFirst, blocksPerMultiprocessor);
    }

    /** Streamed options ({@code paged_decode_stream}) with another launch shape; 0 thread blocks: as many as fit. */
    public KernelOptions streamed(int warps, int stages, boolean bulkCopy, int blocksPerMultiprocessor) {
        return new KernelOptions(shape, blocksPerPage, warps, stages, 0, false, blocksPerMultiprocessor, true, bulkCopy);
    }

    /** Threads per thread block. */
    public int threads() {
        return warps * 32;
    }

    /**
     * Dynamic shared memory of one thread block: each warp's ring of K and V tiles, and the warps'
     * results to merge (chunked: in the rings' place once they are drained; streamed: beside them,
     * with the bulk copies' barriers and the last-piece flag).
     */
    public int sharedBytes() {
        return sharedBytes(shape, warps, stages, streamed, bulkCopy);
    }

    /** The NVRTC options, architecture excluded. */
    public List<String> defines() {
        return List.of(
                "-DDTYPE_BF16=" + (shape.dtype() == KvDtype.BF16 ? 1 : 0),
                "-DHEAD_DIM=" + shape.headSize(),
                "-DGROUP=" + shape.group(),
                "-DKV_HEADS=" + shape.kvHeads(),
                "-DBLOCK_TOKENS=" + shape.blockTokens(),
                "-DBLOCKS_PER_PAGE=" + blocksPerPage,
                "-DWARPS=" + warps,
                "-DSTAGES=" + stages,
                "-DL2_PREFETCH=" + l2Prefetch,
                "-DHEADS_FIRST=" + (headsFirst ? 1 : 0),
                "-DCOPY_BULK=" + (bulkCopy ? 1 : 0),
                "-DMIN_CTAS=" + Math.max(1, streamed ? blocksPerMultiprocessor : 1));
    }

    private static int sharedBytes(AttentionShape shape, int warps, int stages, boolean streamed, boolean bulkCopy) {
        // bulk copies land in rows padded by 16 bytes (no bank conflicts without a swizzle)
        long tile = SplitPlan.TILE * (shape.rowBytes() + (bulkCopy ? 16L : 0L));
        long ring = (long) warps * stages * 2 * tile;
        long merge = (long) warps * shape.group() * (shape.headSize() + 2) * Float.BYTES;
        if (!streamed) {
            return (int) Math.max(ring, merge);
        }
        long barriers = (long) warps * stages * Long.BYTES;
        return (int) (ring + merge + barriers + 16);
    }
}
