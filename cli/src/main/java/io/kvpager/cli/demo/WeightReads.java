package io.kvpager.cli.demo;

import static jcuda.driver.JCudaDriver.cuLaunchKernel;
import static jcuda.driver.JCudaDriver.cuMemAlloc;
import static jcuda.driver.JCudaDriver.cuMemFree;
import static jcuda.driver.JCudaDriver.cuMemsetD32;
import static jcuda.driver.JCudaDriver.cuModuleGetFunction;
import static jcuda.driver.JCudaDriver.cuModuleLoadData;
import static jcuda.driver.JCudaDriver.cuModuleUnload;

import io.kvpager.attention.KernelCache;
import jcuda.Pointer;
import jcuda.driver.CUdeviceptr;
import jcuda.driver.CUfunction;
import jcuda.driver.CUmodule;
import jcuda.driver.CUstream;

/**
 * A model's weights on the GPU in {@code kvpager demo --device cuda}: memory of the weights' size,
 * held for the run, and read whole at every step, as a decode step's matrix products read every
 * weight once. The demo loads no real model, so the bytes are zeros; what the read costs (the
 * HBM traffic of the step's weights, on the stream every model's kernels share) is real.
 *
 * <p>The read is a grid-stride loop of 16-byte loads folded into one word, written only when it
 * equals a value it never takes, so the compiler keeps every load and nothing is written.
 */
final class WeightReads implements AutoCloseable {

    private static final String SOURCE = """
            extern "C" __global__ void __launch_bounds__(512)
            read_weights(const uint4* __restrict__ weights, unsigned long long words, unsigned int* __restrict__ sink) {
                unsigned int fold = 0;
                for (unsigned long long i = (unsigned long long)blockIdx.x * blockDim.x + threadIdx.x; i < words;
                     i += (unsigned long long)gridDim.x * blockDim.x) {
                    uint4 w = __ldcs(weights + i);
                    fold ^= w.x ^ w.y ^ w.z ^ w.w;
                }
                if (fold == 0xfeedf00du) {
                    sink[0] = fold;
                }
            }
            """;
    private static final int THREADS = 512;
    /** Thread blocks per multiprocessor: enough loads in flight to keep HBM busy. */
    private static final int BLOCKS_PER_SM = 4;

    private final CUmodule module = new CUmodule();
    private final CUfunction read = new CUfunction();
    private final CUdeviceptr weights = new CUdeviceptr();
    private final CUdeviceptr sink = new CUdeviceptr();
    private final long bytes;
    private final int blocks;
    private boolean loaded;
    private boolean sinkHeld;
    private boolean weightsHeld;

    /**
     * Allocates {@code bytes} (zeroed) on the current context's GPU; takes the read for
     * {@code architecture} from {@code kernels}, which compiles it once and keeps it as it keeps attention's.
     */
    WeightReads(long bytes, KernelCache kernels, String architecture, int multiprocessors) {
        this.bytes = bytes - bytes % 16;
        this.blocks = multiprocessors * BLOCKS_PER_SM;
        byte[] cubin = kernels.module(SOURCE, "read_weights.cu", architecture);
        try {
            cuModuleLoadData(module, cubin);
            loaded = true;
            cuModuleGetFunction(read, module, "read_weights");
            cuMemAlloc(sink, 4);
            sinkHeld = true;
            if (this.bytes > 0) {
                cuMemAlloc(weights, this.bytes);
                weightsHeld = true;
                cuMemsetD32(weights, 0, this.bytes / 4);
            }
        } catch (RuntimeException e) {
            close();
            throw e;
        }
    }

    /** Queues one read of every weight on {@code stream}. */
    void read(CUstream stream) {
        if (bytes == 0) {
            return;
        }
        Pointer parameters = Pointer.to(Pointer.to(weights), Pointer.to(new long[] {bytes / 16}), Pointer.to(sink));
        cuLaunchKernel(read, blocks, 1, 1, THREADS, 1, 1, 0, stream, parameters, null);
    }

    long bytes() {
        return bytes;
    }

    @Override
    public void close() {
        if (weightsHeld) {
            weightsHeld = false;
            cuMemFree(weights);
        }
        if (sinkHeld) {
            sinkHeld = false;
            cuMemFree(sink);
        }
        if (loaded) {
            loaded = false;
            cuModuleUnload(module);
        }
    }
}
