package io.kvpager.attention;

import io.kvpager.Geometry;
import java.util.ArrayList;
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
 *
 * <p>{@code warpPerHead} (chunked only) makes the warp the unit of work instead of the thread
 * block: each warp takes one (sequence, KV head, chunk) alone and a thread block {@code warps}
 * consecutive KV heads, so {@code warps} times as many (sequence, KV head) pairs run at once.
 */
public record KernelOptions(AttentionShape shape, int blocksPerPage, int warps, int stages, int l2Prefetch,
                            boolean headsFirst, int blocksPerMultiprocessor, boolean wholeBlocks, int tokensPerCopy,
                            boolean warpPerHead) {

    /** Shared memory a thread block may use on the GPUs kvpager targets (sm_80 and later). */
    public static final int MAX_SHARED_BYTES = 227 * 1024;
    /** KV heads the whole-block kernel takes at most (one warp each, registers for all of them). */
    public static final int MAX_WHOLE_BLOCK_HEADS = 8;
    /** Tiles in flight and in use of the whole-block kernel at most by {@link #wholeBlockOptions()}. */
    public static final int DEFAULT_STAGES = 3;
    /** Warps of a chunked thread block at most (512 threads: 128 registers a thread, one per multiprocessor). */
    public static final int MAX_WARPS = 16;
    /** Warps of a thread block of the one-wave alternative with a warp per KV head: the finer grain measured fastest. */
    public static final int WARP_PER_HEAD_WARPS = 2;

    public KernelOptions {
        if (wholeBlocks && shape.fp8()) {
            throw new IllegalArgumentException("the whole-block kernel reads bf16 pages only; FP8 pages use the chunked kernel");
        }
        if (wholeBlocks && shape.kvHeads() > MAX_WHOLE_BLOCK_HEADS) {
            throw new IllegalArgumentException("the whole-block kernel takes at most " + MAX_WHOLE_BLOCK_HEADS
                    + " KV heads, the shape has " + shape.kvHeads() + ": use the chunked kernel");
        }
        if (wholeBlocks && warpPerHead) {
            throw new IllegalArgumentException("a warp per KV head is a mode of the chunked kernel; the whole-block kernel "
                    + "already runs one warp per KV head");
        }
        if (wholeBlocks && warps != shape.kvHeads()) {
            throw new IllegalArgumentException("the whole-block kernel runs one warp per KV head: warps must be "
                    + shape.kvHeads() + ", got " + warps);
        }
        if (blocksPerPage <= 0) {
            throw new IllegalArgumentException("blocksPerPage must be at least 1, got " + blocksPerPage);
        }
        if (warps < 1 || warps > MAX_WARPS) {
            throw new IllegalArgumentException("warps must be 1.." + MAX_WARPS + ", got " + warps);
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
        int shared = sharedBytes(shape, warps, stages, wholeBlocks, tokensPerCopy, warpPerHead);
        if (shared > MAX_SHARED_BYTES) {
            throw new IllegalArgumentException(warps + " warps × " + stages + " stages of head size " + shape.headSize()
                    + " need " + shared + " bytes of shared memory; at most " + MAX_SHARED_BYTES + " fit");
        }
    }

    /** Chunked options ({@code paged_decode}), the warps of a thread block sharing one KV head. */
    public KernelOptions(AttentionShape shape, int blocksPerPage, int warps, int stages, int l2Prefetch, boolean headsFirst,
                         int blocksPerMultiprocessor) {
        this(shape, blocksPerPage, warps, stages, l2Prefetch, headsFirst, blocksPerMultiprocessor, false, 1, false);
    }

    /** Options of either kernel, the chunked kernel's warps sharing one KV head. */
    public KernelOptions(AttentionShape shape, int blocksPerPage, int warps, int stages, int l2Prefetch, boolean headsFirst,
                         int blocksPerMultiprocessor, boolean wholeBlocks, int tokensPerCopy) {
        this(shape, blocksPerPage, warps, stages, l2Prefetch, headsFirst, blocksPerMultiprocessor, wholeBlocks, tokensPerCopy,
                false);
    }

    /**
     * The defaults for {@code shape} over a cache of {@code geometry}: the chunked kernel, 4 warps
     * (3 over FP8 pages), 2 copy stages, the split plan in whole waves ({@link SplitPlan#waves}):
     * the fastest of the launch shapes the benchmark tried on the H200 (docs/attention.md), and it
     * runs on any GPU and head count. The whole-block kernel ({@link #wholeBlocks(int, int)}) read
     * 15 to 45 % slower there. Over FP8 pages 3 warps fit 5 thread blocks to a multiprocessor (4
     * warps fit 4), so 64 sequences × 8 KV heads run whole in one wave either way, and 3 read faster.
     */
    public static KernelOptions of(AttentionShape shape, Geometry geometry) {
        shape.requireFits(geometry);
        return new KernelOptions(shape, geometry.blocksPerPage(), shape.fp8() ? 3 : 4, 2, 0, false, 0);
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
            if (sharedBytes(shape, shape.kvHeads(), stages, true, 1, false) <= MAX_SHARED_BYTES) {
                return Optional.of(wholeBlocks(stages, 0));
            }
        }
        return Optional.empty();
    }

    /**
     * The launch shapes {@link PagedDecodeAttention#create(AttentionShape, KvTensors, int, KernelCache)}
     * keeps beside the default, in the order {@code load} tries them for a batch the default would
     * cut and merge or run in several waves: the first that runs the batch whole in one wave
     * ({@link SplitPlan#isOneWhole}) runs it. Each is left out where its shared memory does not fit:
     * <ul>
     *   <li>3 warps, the same stages (where the default has more): bf16 at head size 128 on the
     *       H200, 4 thread blocks fit a multiprocessor where the default's 4 warps fit 3, the same
     *       12 warps, so 64 sequences × 8 KV heads (512) run uncut in one wave (528 resident)
     *       instead of cut and merged (396): 3 to 5 % faster in the benchmark.</li>
     *   <li>a warp per KV head, 2 warps a thread block, the same stages: over FP8 pages 8 thread
     *       blocks of 2 warps fit a multiprocessor, 16 (sequence, KV head) pairs, so 256 sequences
     *       × 8 KV heads (1,024 thread blocks) run in one wave instead of four.</li>
     *   <li>{@value #MAX_WARPS} warps, the same stages: one thread block per multiprocessor with
     *       {@value #MAX_WARPS} warps sharing one KV head, for few long sequences: 16 × 8 KV heads
     *       (128 pairs, at most one per multiprocessor) uncut, with no merge pass.</li>
     * </ul>
     * Empty for the whole-block kernel, for a warp per KV head and for options with their own
     * thread blocks per multiprocessor.
     */
    public List<KernelOptions> oneWaveAlternatives() {
        if (wholeBlocks || warpPerHead || blocksPerMultiprocessor != 0) {
            return List.of();
        }
        List<KernelOptions> alternatives = new ArrayList<>();
        if (warps > 3) {
            fitting(3, false).ifPresent(alternatives::add);
        }
        fitting(WARP_PER_HEAD_WARPS, true).ifPresent(alternatives::add);
        if (warps < MAX_WARPS) {
            fitting(MAX_WARPS, false).ifPresent(alternatives::add);
        }
        return List.copyOf(alternatives);
    }

    private Optional<KernelOptions> fitting(int warps, boolean warpPerHead) {
        if (sharedBytes(shape, warps, stages, false, 1, warpPerHead) > MAX_SHARED_BYTES) {
            return Optional.empty();
        }
        return Optional.of(new KernelOptions(shape, blocksPerPage, warps, stages, l2Prefetch, headsFirst, 0, false, 1,
                warpPerHead));
    }

    /** Chunked options ({@code paged_decode}) with another launch shape, its warps sharing one KV head. */
    public KernelOptions with(int warps, int stages, int l2Prefetch, boolean headsFirst, int blocksPerMultiprocessor) {
        return new KernelOptions(shape, blocksPerPage, warps, stages, l2Prefetch, headsFirst, blocksPerMultiprocessor);
    }

    /** The same chunked options with a warp per KV head ({@code warpPerHead}). */
    public KernelOptions withWarpPerHead() {
        if (wholeBlocks) {
            throw new IllegalArgumentException("a warp per KV head is a mode of the chunked kernel");
        }
        return new KernelOptions(shape, blocksPerPage, warps, stages, l2Prefetch, headsFirst, blocksPerMultiprocessor, false,
                1, true);
    }

    /**
     * Thread blocks of the chunked kernel per (sequence, chunk): one per KV head, or with a warp
     * per KV head one per {@code warps} KV heads (the last one's spare warps idle).
     */
    public int blocksPerChunk() {
        return warpPerHead ? (shape.kvHeads() + warps - 1) / warps : shape.kvHeads();
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
        return sharedBytes(shape, warps, stages, wholeBlocks, tokensPerCopy, warpPerHead);
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
                "-DTOKENS_PER_COPY=" + tokensPerCopy,
                "-DWARP_HEADS=" + (warpPerHead ? 1 : 0));
    }

    private static int sharedBytes(AttentionShape shape, int warps, int stages, boolean wholeBlocks, int tokensPerCopy,
                                   boolean warpPerHead) {
        if (wholeBlocks) {
            // each copy of tokensPerCopy token rows padded by 16 bytes
            long tile = SplitPlan.TILE * shape.rowBytes() * shape.kvHeads() + SplitPlan.TILE / tokensPerCopy * 16L;
            return (int) Math.min(Integer.MAX_VALUE, stages * (2 * tile + 2 * Long.BYTES) + 16);
        }
        // FP8: each tile's 16 K and 16 V scales (fp32) after the two tiles of a stage
        long tile = SplitPlan.TILE * shape.rowBytes() + (shape.fp8() ? SplitPlan.TILE * Float.BYTES : 0);
        long ring = (long) warps * stages * 2 * tile;
        // the warps' results for the merge: all of them at once, or with a warp per KV head each in its own ring
        long result = (long) shape.group() * (shape.headSize() + 2) * Float.BYTES;
        if (warpPerHead) {
            return (int) Math.min(Integer.MAX_VALUE, warps * Math.max(ring / warps, result));
        }
        return (int) Math.max(ring, warps * result);
    }
}
