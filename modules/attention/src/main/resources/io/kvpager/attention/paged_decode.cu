// Paged decode attention over kvpager's blocks: softmax(q·Kᵀ/√D)·V for one new token per
// sequence, reading K and V through each sequence's block table, split over the sequence
// (flash-decoding) so that a few long sequences still fill the GPU.
//
// Compiled at run time by NVRTC with every shape fixed by -D options (see KernelOptions.java):
//   DTYPE_BF16 (1: bfloat16, 0: float16), HEAD_DIM (64, 128, 256), GROUP (query heads per KV
//   head, 1..16), KV_HEADS, BLOCK_TOKENS, BLOCKS_PER_PAGE, WARPS, STAGES, L2_PREFETCH (0, 64, 128
//   or 256: the L2 prefetch size hint of each copy), HEADS_FIRST (1: blockIdx.x is the KV head, so
//   the thread blocks of one chunk's heads run side by side; 0: blockIdx.x is the split).
// No header is included, so the kernel compiles wherever NVRTC runs.
//
// Block layout (what an engine writes): block b of a (layer, buffer) view starts at
//   base + (b / BLOCKS_PER_PAGE) * pageStride + (b % BLOCKS_PER_PAGE) * blockStride
// and holds BLOCK_TOKENS tokens × KV_HEADS heads × HEAD_DIM elements, row-major: token t,
// head h, element d at byte ((t * KV_HEADS + h) * HEAD_DIM + d) * 2.
//
// One CTA computes one (sequence, KV head, split): its WARPS warps take 16-token tiles in turn,
// each warp streaming K and V tiles into its own shared-memory ring with cp.async (STAGES deep),
// scoring all GROUP query heads of the KV head at once with tensor-core mma (bf16/fp16 in, fp32
// accumulate), with an online softmax. The warps' partial results are merged in shared memory;
// a sequence with several splits leaves (max, sum, unnormalised output) per split for
// paged_decode_merge.

#ifndef DTYPE_BF16
#define DTYPE_BF16 1
#endif
#ifndef HEAD_DIM
#define HEAD_DIM 128
#endif
#ifndef GROUP
#define GROUP 4
#endif
#ifndef KV_HEADS
#define KV_HEADS 8
#endif
#ifndef BLOCK_TOKENS
#define BLOCK_TOKENS 16
#endif
#ifndef BLOCKS_PER_PAGE
#define BLOCKS_PER_PAGE 64
#endif
#ifndef WARPS
#define WARPS 4
#endif
#ifndef STAGES
#define STAGES 3
#endif
#ifndef L2_PREFETCH
#define L2_PREFETCH 0
#endif
#ifndef HEADS_FIRST
#define HEADS_FIRST 0
#endif

typedef unsigned short u16;
typedef unsigned int u32;
typedef unsigned long long u64;

#define TILE 16
#define ROW_BYTES (HEAD_DIM * 2)
#define CHUNKS (HEAD_DIM / 8)
#define TILE_BYTES (TILE * ROW_BYTES)
#define STAGE_BYTES (2 * TILE_BYTES)
#define TOKEN_STRIDE ((u64)KV_HEADS * ROW_BYTES)
#define QUERY_HEADS (KV_HEADS * GROUP)
#define THREADS (WARPS * 32)
#define NEG_INF (-__int_as_float(0x7f800000))

#if HEAD_DIM != 64 && HEAD_DIM != 128 && HEAD_DIM != 256
#error "HEAD_DIM must be 64, 128 or 256"
#endif
#if GROUP < 1 || GROUP > 16
#error "GROUP must be 1..16"
#endif

#if DTYPE_BF16
#define MMA_TYPE "bf16"
#else
#define MMA_TYPE "f16"
#endif

__device__ __forceinline__ u32 shared_address(const void* p) {
    u32 r;
    asm("{ .reg .u64 a; cvta.to.shared.u64 a, %1; cvt.u32.u64 %0, a; }" : "=r"(r) : "l"(p));
    return r;
}

// 16 bytes global -> shared; bytes = 0 writes zeros and reads nothing.
#if L2_PREFETCH == 256
#define COPY_HINT ".L2::256B"
#elif L2_PREFETCH == 128
#define COPY_HINT ".L2::128B"
#elif L2_PREFETCH == 64
#define COPY_HINT ".L2::64B"
#else
#define COPY_HINT ""
#endif

__device__ __forceinline__ void copy16(u32 dst, u64 src, int bytes) {
    asm volatile("cp.async.cg.shared.global" COPY_HINT " [%0], [%1], 16, %2;\n" :: "r"(dst), "l"(src), "r"(bytes));
}

__device__ __forceinline__ void commit() {
    asm volatile("cp.async.commit_group;\n" ::);
}

template <int N>
__device__ __forceinline__ void wait_pending() {
    asm volatile("cp.async.wait_group %0;\n" :: "n"(N));
}

__device__ __forceinline__ void ldmatrix4(u32& r0, u32& r1, u32& r2, u32& r3, u32 address) {
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0,%1,%2,%3}, [%4];\n"
                 : "=r"(r0), "=r"(r1), "=r"(r2), "=r"(r3) : "r"(address));
}

__device__ __forceinline__ void ldmatrix4_trans(u32& r0, u32& r1, u32& r2, u32& r3, u32 address) {
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0,%1,%2,%3}, [%4];\n"
                 : "=r"(r0), "=r"(r1), "=r"(r2), "=r"(r3) : "r"(address));
}

// c (16x8 fp32) += a (16x16) * b (16x8)
__device__ __forceinline__ void mma(float* c, const u32* a, u32 b0, u32 b1) {
    asm volatile("mma.sync.aligned.m16n8k16.row.col.f32." MMA_TYPE "." MMA_TYPE ".f32 "
                 "{%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};\n"
                 : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
}

// Two floats to one register of two 16-bit values, lo in the low half.
__device__ __forceinline__ u32 pack(float lo, float hi) {
    u32 r;
#if DTYPE_BF16
    asm("cvt.rn.bf16x2.f32 %0, %1, %2;" : "=r"(r) : "f"(hi), "f"(lo));
#else
    asm("cvt.rn.f16x2.f32 %0, %1, %2;" : "=r"(r) : "f"(hi), "f"(lo));
#endif
    return r;
}

__device__ __forceinline__ u16 to_half(float f) {
    u16 h;
#if DTYPE_BF16
    asm("cvt.rn.bf16.f32 %0, %1;" : "=h"(h) : "f"(f));
#else
    asm("cvt.rn.f16.f32 %0, %1;" : "=h"(h) : "f"(f));
#endif
    return h;
}

// Byte address of token `token`'s row for KV head `head` in the view at `base`.
__device__ __forceinline__ u64 row_address(const int* table, int token, int head, u64 base, u64 blockStride,
                                           u64 pageStride) {
    u32 block = (u32)__ldg(table + token / BLOCK_TOKENS);
    u32 within = (u32)(token % BLOCK_TOKENS);
    return base + (u64)(block / BLOCKS_PER_PAGE) * pageStride + (u64)(block % BLOCKS_PER_PAGE) * blockStride
           + (u64)within * TOKEN_STRIDE + (u64)head * ROW_BYTES;
}

extern "C" __global__ void __launch_bounds__(THREADS)
paged_decode(const u16* __restrict__ query, u16* __restrict__ out, float* __restrict__ partial,
             float2* __restrict__ partialStats, const int* __restrict__ tables, const int* __restrict__ tableStart,
             const int* __restrict__ lengths, u64 kBase, u64 vBase, u64 blockStride, u64 pageStride,
             int chunkTokens, int maxSplits, float scaleLog2) {
    extern __shared__ __align__(128) unsigned char smem[];
#if HEADS_FIRST
    const int head = blockIdx.x;
    const int split = blockIdx.y;
#else
    const int split = blockIdx.x;
    const int head = blockIdx.y;
#endif
    const int seq = blockIdx.z;
    const int length = lengths[seq];
    const int begin = split * chunkTokens;
    if (begin >= length) {
        return;
    }
    const int end = min(length, begin + chunkTokens);
    const int splits = (length + chunkTokens - 1) / chunkTokens;
    const u32 warp = threadIdx.x >> 5;
    const u32 lane = threadIdx.x & 31;
    const u32 g = lane >> 2;
    const u32 t = lane & 3;
    const int* table = tables + tableStart[seq];

    // Query rows of this KV head's group as mma A fragments (rows >= GROUP are zero).
    u32 qa[HEAD_DIM / 16][4];
    const u32* q = (const u32*)(query + ((u64)seq * QUERY_HEADS + (u64)head * GROUP) * HEAD_DIM);
#pragma unroll
    for (int s = 0; s < HEAD_DIM / 16; ++s) {
        qa[s][0] = g < GROUP ? q[(g * HEAD_DIM + 16 * s + 2 * t) / 2] : 0u;
        qa[s][1] = g + 8 < GROUP ? q[((g + 8) * HEAD_DIM + 16 * s + 2 * t) / 2] : 0u;
        qa[s][2] = g < GROUP ? q[(g * HEAD_DIM + 16 * s + 8 + 2 * t) / 2] : 0u;
        qa[s][3] = g + 8 < GROUP ? q[((g + 8) * HEAD_DIM + 16 * s + 8 + 2 * t) / 2] : 0u;
    }

    float o[HEAD_DIM / 8][4];
#pragma unroll
    for (int n = 0; n < HEAD_DIM / 8; ++n) {
        o[n][0] = o[n][1] = o[n][2] = o[n][3] = 0.f;
    }
    float rowMax[2] = {NEG_INF, NEG_INF};
    float rowSum[2] = {0.f, 0.f};

    unsigned char* ring = smem + warp * (STAGES * STAGE_BYTES);
    const u32 ringAddress = shared_address(ring);
    const u64 vDelta = vBase - kBase;
    const int tiles = (end - begin + TILE - 1) / TILE;
    const int mine = tiles > (int)warp ? (tiles - (int)warp + WARPS - 1) / WARPS : 0;

    // Queue the copies of this warp's j-th tile into ring slot j % STAGES.
    auto issue = [&](int j) {
        if (j < mine) {
            const int first = begin + ((int)warp + j * WARPS) * TILE;
            const u32 slot = ringAddress + (u32)(j % STAGES) * STAGE_BYTES;
#pragma unroll
            for (int i = 0; i < TILE * CHUNKS / 32; ++i) {
                const u32 c = lane + 32 * i;
                const u32 r = c / CHUNKS;
                const u32 ch = c % CHUNKS;
                const int token = first + (int)r;
                const u32 dst = slot + r * ROW_BYTES + ((ch ^ (r & 7)) * 16);
                if (token < end) {
                    const u64 src = row_address(table, token, head, kBase, blockStride, pageStride) + ch * 16;
                    copy16(dst, src, 16);
                    copy16(dst + TILE_BYTES, src + vDelta, 16);
                } else {
                    copy16(dst, kBase, 0);
                    copy16(dst + TILE_BYTES, kBase, 0);
                }
            }
        }
        commit();
    };

#pragma unroll
    for (int j = 0; j < STAGES - 1; ++j) {
        issue(j);
    }
    for (int j = 0; j < mine; ++j) {
        issue(j + STAGES - 1);
        wait_pending<STAGES - 1>();
        __syncwarp();
        const u32 kTile = ringAddress + (u32)(j % STAGES) * STAGE_BYTES;
        const u32 vTile = kTile + TILE_BYTES;
        const int first = begin + ((int)warp + j * WARPS) * TILE;

        // Scores of GROUP heads (rows) × 16 tokens (two n-tiles of 8).
        float sc[2][4] = {{0.f, 0.f, 0.f, 0.f}, {0.f, 0.f, 0.f, 0.f}};
        {
            const u32 m = lane >> 3;
            const u32 row = 8 * (m >> 1) + (lane & 7);
#pragma unroll
            for (int s = 0; s < HEAD_DIM / 16; ++s) {
                const u32 ch = 2 * s + (m & 1);
                u32 b00, b01, b10, b11;
                ldmatrix4(b00, b01, b10, b11, kTile + row * ROW_BYTES + ((ch ^ (row & 7)) * 16));
                mma(sc[0], qa[s], b00, b01);
                mma(sc[1], qa[s], b10, b11);
            }
        }
        float tileMax[2] = {NEG_INF, NEG_INF};
#pragma unroll
        for (int n = 0; n < 2; ++n) {
#pragma unroll
            for (int e = 0; e < 4; ++e) {
                const int token = first + 8 * n + 2 * (int)t + (e & 1);
                sc[n][e] = token < end ? sc[n][e] * scaleLog2 : NEG_INF;
                tileMax[e >> 1] = fmaxf(tileMax[e >> 1], sc[n][e]);
            }
        }
        float alpha[2];
#pragma unroll
        for (int r = 0; r < 2; ++r) {
            tileMax[r] = fmaxf(tileMax[r], __shfl_xor_sync(0xffffffffu, tileMax[r], 1));
            tileMax[r] = fmaxf(tileMax[r], __shfl_xor_sync(0xffffffffu, tileMax[r], 2));
            const float next = fmaxf(rowMax[r], tileMax[r]);
            const float base = next == NEG_INF ? 0.f : next;
            alpha[r] = exp2f(rowMax[r] - base);
            rowMax[r] = next;
            tileMax[r] = base;
            rowSum[r] *= alpha[r];
        }
#pragma unroll
        for (int n = 0; n < 2; ++n) {
#pragma unroll
            for (int e = 0; e < 4; ++e) {
                sc[n][e] = exp2f(sc[n][e] - tileMax[e >> 1]);
                rowSum[e >> 1] += sc[n][e];
            }
        }
#pragma unroll
        for (int n = 0; n < HEAD_DIM / 8; ++n) {
            o[n][0] *= alpha[0];
            o[n][1] *= alpha[0];
            o[n][2] *= alpha[1];
            o[n][3] *= alpha[1];
        }
        const u32 pa[4] = {pack(sc[0][0], sc[0][1]), pack(sc[0][2], sc[0][3]), pack(sc[1][0], sc[1][1]),
                           pack(sc[1][2], sc[1][3])};
        {
            const u32 m = lane >> 3;
            const u32 row = 8 * (m & 1) + (lane & 7);
#pragma unroll
            for (int p = 0; p < HEAD_DIM / 16; ++p) {
                const u32 ch = 2 * p + (m >> 1);
                u32 b0, b1, b2, b3;
                ldmatrix4_trans(b0, b1, b2, b3, vTile + row * ROW_BYTES + ((ch ^ (row & 7)) * 16));
                mma(o[2 * p], pa, b0, b1);
                mma(o[2 * p + 1], pa, b2, b3);
            }
        }
        __syncwarp();
    }
    wait_pending<0>();

#pragma unroll
    for (int r = 0; r < 2; ++r) {
        rowSum[r] += __shfl_xor_sync(0xffffffffu, rowSum[r], 1);
        rowSum[r] += __shfl_xor_sync(0xffffffffu, rowSum[r], 2);
    }

    // Merge the warps: per warp and head, (max, sum) then HEAD_DIM partial outputs.
    __syncthreads();
    float* stats = (float*)smem;
    float* parts = stats + 2 * WARPS * GROUP;
#pragma unroll
    for (int r = 0; r < 2; ++r) {
        const u32 h = g + 8 * r;
        if (h < GROUP) {
            if (t == 0) {
                stats[2 * (warp * GROUP + h)] = rowMax[r];
                stats[2 * (warp * GROUP + h) + 1] = rowSum[r];
            }
            float* dst = parts + (warp * GROUP + h) * HEAD_DIM;
#pragma unroll
            for (int n = 0; n < HEAD_DIM / 8; ++n) {
                dst[8 * n + 2 * t] = o[n][2 * r];
                dst[8 * n + 2 * t + 1] = o[n][2 * r + 1];
            }
        }
    }
    __syncthreads();
    for (int i = threadIdx.x; i < GROUP * HEAD_DIM; i += THREADS) {
        const int h = i / HEAD_DIM;
        const int d = i % HEAD_DIM;
        float m = NEG_INF;
#pragma unroll
        for (int w = 0; w < WARPS; ++w) {
            m = fmaxf(m, stats[2 * (w * GROUP + h)]);
        }
        float sum = 0.f;
        float acc = 0.f;
#pragma unroll
        for (int w = 0; w < WARPS; ++w) {
            const float wm = stats[2 * (w * GROUP + h)];
            const float scale = wm == NEG_INF ? 0.f : exp2f(wm - m);
            sum += scale * stats[2 * (w * GROUP + h) + 1];
            acc += scale * parts[(w * GROUP + h) * HEAD_DIM + d];
        }
        const u64 queryHead = (u64)seq * QUERY_HEADS + (u64)head * GROUP + h;
        if (splits == 1) {
            out[queryHead * HEAD_DIM + d] = to_half(acc / sum);
        } else {
            const u64 at = queryHead * maxSplits + split;
            partial[at * HEAD_DIM + d] = acc;
            if (d == 0) {
                partialStats[at] = make_float2(m, sum);
            }
        }
    }
}

// Merges the splits of every sequence that has more than one: grid (QUERY_HEADS, sequences),
// HEAD_DIM threads.
extern "C" __global__ void __launch_bounds__(HEAD_DIM)
paged_decode_merge(u16* __restrict__ out, const float* __restrict__ partial,
                   const float2* __restrict__ partialStats, const int* __restrict__ lengths, int chunkTokens,
                   int maxSplits) {
    const int queryHead = blockIdx.x;
    const int seq = blockIdx.y;
    const int d = threadIdx.x;
    const int splits = (lengths[seq] + chunkTokens - 1) / chunkTokens;
    if (splits <= 1) {
        return;
    }
    const u64 row = ((u64)seq * QUERY_HEADS + queryHead) * maxSplits;
    float m = NEG_INF;
    for (int s = 0; s < splits; ++s) {
        m = fmaxf(m, partialStats[row + s].x);
    }
    float sum = 0.f;
    float acc = 0.f;
    for (int s = 0; s < splits; ++s) {
        const float2 ms = partialStats[row + s];
        const float scale = exp2f(ms.x - m);
        sum += scale * ms.y;
        acc += scale * partial[(row + s) * HEAD_DIM + d];
    }
    out[((u64)seq * QUERY_HEADS + queryHead) * HEAD_DIM + d] = to_half(acc / sum);
}

// The paged-read floor: reads exactly the K and V bytes paged_decode reads (every KV head of
// every token up to each sequence's length, through the same block tables), 16 bytes a load,
// and does nothing with them but fold them into one word. Grid (splits, sequences).
extern "C" __global__ void __launch_bounds__(256)
paged_read(const int* __restrict__ tables, const int* __restrict__ tableStart, const int* __restrict__ lengths,
           u64 kBase, u64 vBase, u64 blockStride, u64 pageStride, int chunkTokens, u32* __restrict__ sink) {
    const int seq = blockIdx.y;
    const int length = lengths[seq];
    const int begin = blockIdx.x * chunkTokens;
    if (begin >= length) {
        return;
    }
    const int end = min(length, begin + chunkTokens);
    const int* table = tables + tableStart[seq];
    const u32 perToken = (u32)(TOKEN_STRIDE / 16);
    const u32 total = (u32)(end - begin) * perToken;
    const u64 vDelta = vBase - kBase;
    u32 fold = 0;
    for (u32 i0 = threadIdx.x; i0 < total; i0 += 256 * 4) {
        u32 w[8][4];
#pragma unroll
        for (int k = 0; k < 4; ++k) {
            const u32 i = i0 + 256 * k;
            if (i < total) {
                const int token = begin + (int)(i / perToken);
                const u64 src = row_address(table, token, 0, kBase, blockStride, pageStride) + (i % perToken) * 16;
                asm volatile("ld.global.nc.v4.u32 {%0,%1,%2,%3}, [%4];"
                             : "=r"(w[k][0]), "=r"(w[k][1]), "=r"(w[k][2]), "=r"(w[k][3]) : "l"(src));
                asm volatile("ld.global.nc.v4.u32 {%0,%1,%2,%3}, [%4];"
                             : "=r"(w[k + 4][0]), "=r"(w[k + 4][1]), "=r"(w[k + 4][2]), "=r"(w[k + 4][3])
                             : "l"(src + vDelta));
            } else {
                w[k][0] = w[k][1] = w[k][2] = w[k][3] = 0u;
                w[k + 4][0] = w[k + 4][1] = w[k + 4][2] = w[k + 4][3] = 0u;
            }
        }
#pragma unroll
        for (int k = 0; k < 8; ++k) {
            fold ^= w[k][0] ^ w[k][1] ^ w[k][2] ^ w[k][3];
        }
    }
    if (fold == 0x9e3779b9u) {
        sink[0] = fold;
    }
}
