package io.kvpager.attention;

import io.kvpager.Geometry;
import java.util.List;
import java.util.Optional;

/**
 * What one compiled module of {@code paged_decode.cu} is specialised for: the shape, the cache's
 * blocks per page, and the launch's warps per thread block, copy stages, the L2 prefetch hint of
 * each 16-byte copy (0, 64, 128 or 256 bytes) and the chunked grid's order (KV heads or splits
 * first). Every one becomes a {@code -D} option, so the kernel's loops and divisions are fixed at
 * compile time; the options with the target architecture name a module in the {@link KernelCache}.
 *
 * <p>{@code wholeBlocks} chooses the kernel: {@code paged_decode_blocks} (one warp per KV head, so
 * {@code warps} is the shape's KV heads, at most {@value #MAX_WHOLE_BLOCK_HEADS}, and one more warp
 * queues the copies; whole token rows by bulk copies of {@code tokensPerCopy} tokens each (1, 2,
 * 4, 8 or 16, a divisor of the block's tokens), {@code stages} tiles deep; one equal range of tiles per thread block,
 * {@link StreamPlan}; sm_90 and later) or the chunked {@code paged_decode} with its merge pass
 * ({@link SplitPlan}). {@code blocksPerMultiprocessor} sizes the grid, not compiled in: whole
 * blocks, the thread blocks per multiprocessor (0: as many as fit); chunked, 0 for whole waves of
 * the thread blocks that fit at once ({@link SplitPlan#waves}), else that many thread blocks per
 * multiprocessor ({@link SplitPlan#of(DecodeBatch, int, int, int)}).
 */
public record KernelOptions(AttentionShape shape, int blocksPerPage, int warps, int stages, int l2Prefetch,
                            boolean headsFirst, int blocksPerMultiprocessor, boolean wholeBlocks, int tokensPerCopy) {

    /** Shared memory a thread block may use on the GPUs kvpager targets (sm_80 and later). */
    public static final int MAX_SHARED_BYTES = 227 * 1024;
    /** KV heads the whole-block kernel takes at most (one warp each, registers for all of them). */
    public static final int MAX_WHOLE_BLOCK_HEADS = 8;
    /** Tiles in flight and in use of the whole-block kernel at most by {@link #wholeBlockOptions()}. */
    public static final int DEFAULT_STAGES = 3;

    public KernelOptions {
        if (wholeBlocks && shape.fp8()) {
            throw new IllegalArgumentException("the whole-block kernel reads bf16 pages only; FP8 pages use the chunked kernel");
        }
        if (wholeBlocks && shape.kvHeads() > MAX_WHOLE_BLOCK_HEADS) {
            throw new IllegalArgumentException("the whole-block kernel takes at most " + MAX_WHOLE_BLOCK_HEADS
                    + " KV heads, the shape has " + shape.kvHeads() + ": use the chunked kernel");
        }
        if (wholeBlocks && warps != shape.kvHeads()) {
            throw new IllegalArgumentException("the whole-block kernel runs one warp per KV head: warps must be "
                    + shape.kvHeads() + ", got " + warps);
        }
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
        if (tokensPerCopy != 1 && tokensPerCopy != 2 && tokensPerCopy != 4 && tokensPerCopy != 8 && tokensPerCopy != 16) {
            throw new IllegalArgumentException("tokensPerCopy must be 1, 2, 4, 8 or 16, got " + tokensPerCopy);
        }
        if (wholeBlocks && shape.blockTokens() % tokensPerCopy != 0) {
            throw new IllegalArgumentException("a copy of " + tokensPerCopy + " tokens would cross the end of a block of "
                    + shape.blockTokens());
        }
        if (wholeBlocks && l2Prefetch != 0) {
            throw new IllegalArgumentException("l2Prefetch is a hint of the 16-byte copies; bulk copies take none");
        }
        if (sharedBytes(shape, warps, stages, wholeBlocks, tokensPerCopy) > MAX_SHARED_BYTES) {
            throw new IllegalArgumentException(warps + " warps × " + stages + " stages of head size " + shape.headSize()
                    + " need " + sharedBytes(shape, warps, stages, wholeBlocks, tokensPerCopy) + " bytes of shared memory; at most "
                    + MAX_SHARED_BYTES + " fit");
        }
    }

    /** Chunked options ({@code paged_decode}). */
    public KernelOptions(AttentionShape shape, int blocksPerPage, int warps, int stages, int l2Prefetch, boolean headsFirst,
                         int blocksPerMultiprocessor) {
        this(shape, blocksPerPage, warps, stages, l2Prefetch, headsFirst, blocksPerMultiprocessor, false, 1);
    }

    /**
     * The defaults for {@code shape} over a cache of {@code geometry}: the chunked kernel, 4 warps,
     * 2 copy stages, the split plan in whole waves ({@link SplitPlan#waves}): the fastest of the
     * launch shapes the benchmark tried on the H200 (docs/attention.md), and it runs on any GPU and
     * head count. The whole-block kernel ({@link #wholeBlocks(int, int)}) read 15 to 45 % slower
     * there.
     */
    public static KernelOptions of(AttentionShape shape, Geometry geometry) {
        shape.requireFits(geometry);
        return new KernelOptions(shape, geometry.blocksPerPage(), 4, 2, 0, false, 0);
    }

    /** The chunked kernel with 4 warps, 2 stages and 16 thread blocks per multiprocessor. */
    public KernelOptions portable() {
        return new KernelOptions(shape, blocksPerPage, 4, 2, 0, false, SplitPlan.BLOCKS_PER_MULTIPROCESSOR);
    }

    /**
     * The whole-block kernel's options for this shape with the most stages (up to
     * {@value #DEFAULT_STAGES}) that fit, one token row per copy, as many thread blocks as fit;
     * empty where it cannot run (more than {@value #MAX_WHOLE_BLOCK_HEADS} KV heads, or not even 2
     * stages fit in shared memory).
     */
    public Optional<KernelOptions> wholeBlockOptions() {
        if (shape.kvHeads() > MAX_WHOLE_BLOCK_HEADS || shape.fp8()) {
            return Optional.empty();
        }
        for (int stages = DEFAULT_STAGES; stages >= 2; stages--) {
            if (sharedBytes(shape, shape.kvHeads(), stages, true, 1) <= MAX_SHARED_BYTES) {
                return Optional.of(wholeBlocks(stages, 0));
            }
        }
        return Optional.empty();
    }

    /**
     * The launch shape {@link PagedDecodeAttention#create(AttentionShape, KvTensors, int, KernelCache)}
     * keeps beside the default for batches it runs whole in one wave: the chunked kernel with 3
     * warps (the same stages), whose smaller thread blocks fit 4 to a multiprocessor where the
     * default's 4 warps fit 3 (head size 128 on the H200), the same 12 warps. A batch the default
     * must cut into chunks and merge (64 sequences × 8 KV heads: 512 thread blocks, 396 resident)
     * then runs uncut in one wave instead (528 resident): 3 to 5 % faster in the benchmark, slower
     * where the batch needs several waves either way. Empty for the whole-block kernel, for
     * options that already have 3 warps or fewer, and where 3 warps' shared memory does not fit.
     */
    public Optional<KernelOptions> oneWaveAlternative() {
        if (wholeBlocks || warps <= 3 || blocksPerMultiprocessor != 0) {
            return Optional.empty();
        }
        if (sharedBytes(shape, 3, stages, false, 1) > MAX_SHARED_BYTES) {
            return Optional.empty();
        }
        return Optional.of(with(3, stages, l2Prefetch, headsFirst, 0));
    }

    /** Chunked options ({@code paged_decode}) with another launch shape. */
    public KernelOptions with(int warps, int stages, int l2Prefetch, boolean headsFirst, int blocksPerMultiprocessor) {
        return new KernelOptions(shape, blocksPerPage, warps, stages, l2Prefetch, headsFirst, blocksPerMultiprocessor);
    }

    /**
     * Whole-block options with {@code stages} tiles deep, one token row per copy; 0 thread blocks per
     * multiprocessor: as many as fit.
     */
    public KernelOptions wholeBlocks(int stages, int blocksPerMultiprocessor) {
        return wholeBlocks(stages, blocksPerMultiprocessor, 1);
    }

    /** The same with {@code tokensPerCopy} token rows per copy. */
    public KernelOptions wholeBlocks(int stages, int blocksPerMultiprocessor, int tokensPerCopy) {
        return new KernelOptions(shape, blocksPerPage, shape.kvHeads(), stages, 0, false, blocksPerMultiprocessor, true,
                tokensPerCopy);
    }

    /** Threads per thread block. */
    public int threads() {
        // the whole-block kernel has one more warp, which only queues the copies
        return (wholeBlocks ? warps + 1 : warps) * 32;
    }

    /**
     * Dynamic shared memory of one thread block. Chunked: each warp's ring of K and V tiles, the
     * warps' results merged in its place once drained. Whole blocks: {@code stages} tiles of K and V
     * of every head, token rows padded by 16 bytes, a full and an empty barrier per stage and the
     * last-piece flag.
     */
    public int sharedBytes() {
        return sharedBytes(shape, warps, stages, wholeBlocks, tokensPerCopy);
    }

    /** The NVRTC options, architecture excluded. */
    public List<String> defines() {
        return List.of(
                "-DDTYPE_BF16=" + (shape.dtype() == KvDtype.BF16 ? 1 : 0),
                "-DKV_FP8=" + (shape.fp8() ? 1 : 0),
                "-DHEAD_DIM=" + shape.headSize(),
                "-DGROUP=" + shape.group(),
                "-DKV_HEADS=" + shape.kvHeads(),
                "-DBLOCK_TOKENS=" + shape.blockTokens(),
                "-DBLOCKS_PER_PAGE=" + blocksPerPage,
                "-DWARPS=" + warps,
                "-DSTAGES=" + stages,
                "-DL2_PREFETCH=" + l2Prefetch,
                "-DHEADS_FIRST=" + (headsFirst ? 1 : 0),
                "-DTOKENS_PER_COPY=" + tokensPerCopy);
    }

    private static int sharedBytes(AttentionShape shape, int warps, int stages, boolean wholeBlocks, int tokensPerCopy) {
        if (wholeBlocks) {
            // each copy of tokensPerCopy token rows padded by 16 bytes
            long tile = SplitPlan.TILE * shape.rowBytes() * shape.kvHeads() + SplitPlan.TILE / tokensPerCopy * 16L;
            return (int) Math.min(Integer.MAX_VALUE, stages * (2 * tile + 2 * Long.BYTES) + 16);
        }
        // FP8: each tile's 16 K and 16 V scales (fp32) after the two tiles of a stage
        long tile = SplitPlan.TILE * shape.rowBytes() + (shape.fp8() ? SplitPlan.TILE * Float.BYTES : 0);
        long ring = (long) warps * stages * 2 * tile;
        long merge = (long) warps * shape.group() * (shape.headSize() + 2) * Float.BYTES;
        return (int) Math.max(ring, merge);
    }
}
