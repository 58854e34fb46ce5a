package io.kvpager.attention;

import io.kvpager.Geometry;
import java.util.List;

/**
 * What one compiled module of {@code paged_decode.cu} is specialised for: the shape, the cache's
 * blocks per page, and the launch's warps per thread block, copy stages per warp, the L2 prefetch
 * hint of each copy (0, 64, 128 or 256 bytes) and the grid's order (KV heads or splits first).
 * Every one becomes a {@code -D} option, so the kernel's loops and divisions are fixed at compile
 * time; the options with the target architecture name a module in the {@link KernelCache}.
 * {@code blocksPerMultiprocessor} chooses the split plan, not compiled in: 0 for whole waves of the
 * thread blocks that fit at once ({@link SplitPlan#waves}), else that many thread blocks per
 * multiprocessor ({@link SplitPlan#of(DecodeBatch, int, int, int)}).
 */
public record KernelOptions(AttentionShape shape, int blocksPerPage, int warps, int stages, int l2Prefetch,
                            boolean headsFirst, int blocksPerMultiprocessor) {

    /** Shared memory a thread block may use on the GPUs kvpager targets (sm_80 and later). */
    public static final int MAX_SHARED_BYTES = 227 * 1024;

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
        if (sharedBytes(shape, warps, stages) > MAX_SHARED_BYTES) {
            throw new IllegalArgumentException(warps + " warps × " + stages + " stages of head size " + shape.headSize()
                    + " need " + sharedBytes(shape, warps, stages) + " bytes of shared memory; at most "
                    + MAX_SHARED_BYTES + " fit");
        }
    }

    /**
     * The defaults for {@code shape} over a cache of {@code geometry}: 4 warps, 2 copy stages, no
     * prefetch hint, splits first, {@value SplitPlan#BLOCKS_PER_MULTIPROCESSOR} thread blocks per
     * multiprocessor: the fastest launch shape of those the benchmark tried on the H200
     * (docs/attention.md).
     */
    public static KernelOptions of(AttentionShape shape, Geometry geometry) {
        shape.requireFits(geometry);
        return new KernelOptions(shape, geometry.blocksPerPage(), 4, 2, 0, false, SplitPlan.BLOCKS_PER_MULTIPROCESSOR);
    }

    /** The same options with another launch shape. */
    public KernelOptions with(int warps, int stages, int l2Prefetch, boolean headsFirst, int blocksPerMultiprocessor) {
        return new KernelOptions(shape, blocksPerPage, warps, stages, l2Prefetch, headsFirst, blocksPerMultiprocessor);
    }

    /** Threads per thread block. */
    public int threads() {
        return warps * 32;
    }

    /** Dynamic shared memory of one thread block: each warp's ring of K and V tiles. */
    public int sharedBytes() {
        return sharedBytes(shape, warps, stages);
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
                "-DHEADS_FIRST=" + (headsFirst ? 1 : 0));
    }

    private static int sharedBytes(AttentionShape shape, int warps, int stages) {
        long tile = SplitPlan.TILE * shape.rowBytes();
        long ring = (long) warps * stages * 2 * tile;
        long merge = (long) warps * shape.group() * (shape.headSize() + 2) * Float.BYTES;
        return (int) Math.max(ring, merge);
    }
}
