package io.kvpager.cli.demo;

import io.kvpager.protocol.BusAddress;
import io.kvpager.protocol.ViewsRequest;
import static jcuda.driver.JCudaDriver.cuEventCreate;
import static jcuda.driver.JCudaDriver.cuEventDestroy;
import static jcuda.driver.JCudaDriver.cuMemAlloc;
import static jcuda.driver.JCudaDriver.cuMemFree;
import static jcuda.driver.JCudaDriver.cuMemsetD16;
import static jcuda.driver.JCudaDriver.cuStreamCreate;
import static jcuda.driver.JCudaDriver.cuStreamDestroy;
import static jcuda.driver.JCudaDriver.cuStreamSynchronize;
import static jcuda.driver.JCudaDriver.cuDeviceGet;
import static jcuda.driver.JCudaDriver.cuDeviceGetAttribute;
import static jcuda.driver.JCudaDriver.cuInit;

import io.kvpager.Geometry;
import io.kvpager.KvFormat;
import io.kvpager.attention.AttentionShape;
import io.kvpager.attention.DeviceBuffer;
import io.kvpager.attention.KernelCache;
import io.kvpager.attention.KvDtype;
import io.kvpager.attention.KvTensors;
import io.kvpager.attention.PagedDecodeAttention;
import io.kvpager.spi.Device;
import io.kvpager.spi.DeviceFactory;
import io.vertx.core.Promise;
import io.vertx.core.Vertx;
import io.vertx.core.json.JsonObject;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import jcuda.driver.CUdevice;
import jcuda.driver.CUdevice_attribute;
import jcuda.driver.CUdeviceptr;
import jcuda.driver.JCudaDriver;
import jcuda.driver.CUevent;
import jcuda.driver.CUstream;

/**
 * Decode attention in {@code kvpager demo --device cuda}: at every step of every model, attention
 * of each live (decoding) sequence over the blocks its cache really mapped, every layer and every
 * rank, on one thread of its own that owns a CUDA stream, so no event loop waits for the GPU. The
 * demo writes no K or V, so what attention computes is meaningless; its time and the KV bytes it
 * reads are what the summary reports.
 *
 * <p>The presets' query heads: the 70B-like model has 64 query heads over its 8 KV heads, the
 * others one query head per KV head.
 */
final class DemoAttention implements AutoCloseable {

    private static final long WAIT_S = 120;

    private final ExecutorService thread = Executors.newSingleThreadExecutor(r -> {
        Thread t = new Thread(r, "kvpager-attention");
        t.setDaemon(true);
        return t;
    });
    private final List<ModelAttention> models = new ArrayList<>();
    private final CUstream stream = new CUstream();
    private final CUevent start = new CUevent();
    private final CUevent stop = new CUevent();
    private final CUdeviceptr query = new CUdeviceptr();
    private final CUdeviceptr out = new CUdeviceptr();
    private DeviceBuffer queryBuffer;
    private DeviceBuffer outBuffer;

    private DemoAttention() {
    }

    /** The memory of GPU {@code gpu}, as the device a rank worker opens reports it. */
    static long totalBytes(int gpu) {
        try (Device device = DeviceFactory.forKind("cuda").open(gpu, "demo", Map.of())) {
            device.attach();
            return device.memoryInfo().totalBytes();
        }
    }

    /**
     * Attention for {@code models} (one per cache, in order), over each rank's views, and each
     * model's weights held as {@code weights} and read every step ({@link WeightReads}).
     */
    static DemoAttention open(Vertx vertx, List<ModelProfile> models, int tp, int gpu, WeightFormat weights) {
        List<List<KvTensors>> tensors = new ArrayList<>();
        for (ModelProfile model : models) {
            List<KvTensors> ranks = new ArrayList<>();
            for (int rank = 0; rank < tp; rank++) {
                ViewsRequest views = new ViewsRequest(0);
                JsonObject reply = DemoRun.await(vertx.eventBus().<JsonObject>request(
                        BusAddress.rank(model.instance(), 0, rank), views.toJson(), views.action().delivery()).map(m -> m.body()),
                        "reading the views of " + model.instance() + " rank " + rank);
                long base = reply.getJsonArray("views").getJsonObject(0).getLong("address");
                ranks.add(KvTensors.of(model.geometry(tp, pages(reply, model, tp)), base));
            }
            tensors.add(ranks);
        }
        DemoAttention attention = new DemoAttention();
        try {
            attention.onThread(() -> {
                attention.start(models, tensors, tp, gpu, weights);
                return null;
            });
        } catch (RuntimeException e) {
            attention.close();
            throw e;
        }
        return attention;
    }

    /** The views' block count says how many page ids the cache reserved. */
    private static int pages(JsonObject reply, ModelProfile model, int tp) {
        int blocks = reply.getJsonArray("views").getJsonObject(0).getInteger("blockCount");
        return blocks / model.geometry(tp, 1).blocksPerPage();
    }

    private void start(List<ModelProfile> profiles, List<List<KvTensors>> tensors, int tp, int gpu, WeightFormat weights) {
        JCudaDriver.setExceptionsEnabled(true);
        cuInit(0);
        KernelCache kernels = KernelCache.nvrtc();
        CUdevice device = new CUdevice();
        cuDeviceGet(device, gpu);
        int[] value = new int[1];
        cuDeviceGetAttribute(value, CUdevice_attribute.CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, device);
        int major = value[0];
        cuDeviceGetAttribute(value, CUdevice_attribute.CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, device);
        String architecture = "sm_" + major + value[0];
        cuDeviceGetAttribute(value, CUdevice_attribute.CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, device);
        int multiprocessors = value[0];
        long queryBytes = 0;
        for (int m = 0; m < profiles.size(); m++) {
            ModelProfile model = profiles.get(m);
            int kvHeads = model.headsPerRank(tp);
            int group = model.name().equals(ModelProfile.SEVENTY_B.name()) ? 8 : 1;
            // FP8 pages are read with bf16 queries
            KvDtype dtype = model.kv() == KvFormat.FP8 ? KvDtype.BF16 : KvDtype.FP16;
            AttentionShape shape = new AttentionShape(kvHeads * group, kvHeads, model.headDim(), model.blockTokens(), dtype,
                    model.kv());
            Geometry geometry = tensors.get(m).getFirst().geometry();
            List<PagedDecodeAttention> ranks = new ArrayList<>();
            for (KvTensors rank : tensors.get(m)) {
                ranks.add(PagedDecodeAttention.create(shape, rank, gpu, kernels));
            }
            models.add(new ModelAttention(model, shape, geometry, ranks,
                    new WeightReads(model.weightBytes(weights), kernels, architecture, multiprocessors)));
            queryBytes = Math.max(queryBytes, shape.queryBytes(ModelServer.MAX_BATCH));
        }
        cuStreamCreate(stream, 0);
        cuEventCreate(start, 0);
        cuEventCreate(stop, 0);
        cuMemAlloc(query, queryBytes);
        cuMemAlloc(out, queryBytes);
        // Queries of 1.0 (fp16 0x3c00): any finite value does for timing.
        cuMemsetD16(query, (short) 0x3c00, queryBytes / 2);
        queryBuffer = new DeviceBuffer(query, queryBytes);
        outBuffer = new DeviceBuffer(out, queryBytes);
    }

    /** The kernels of model {@code index} (the order of {@link #open}'s list). */
    BatchKernels kernels(int index) {
        ModelAttention model = models.get(index);
        return (tables, lengths) -> {
            Promise<Void> done = Promise.promise();
            thread.execute(() -> {
                try {
                    model.step(tables, lengths, queryBuffer, outBuffer, stream, start, stop);
                    done.complete();
                } catch (RuntimeException e) {
                    done.fail(e);
                }
            });
            return done.future();
        };
    }

    /** One line per model, with a header. */
    List<String> summary() {
        List<String> lines = new ArrayList<>();
        lines.add("decode steps on the GPU (each model's weights read whole, then attention over every live sequence, every layer and rank; "
                + models.stream().map(m -> m.model.name() + " " + m.shape.queryHeads() + "/" + m.shape.kvHeads()
                        + " heads per rank").reduce((a, b) -> a + ", " + b).orElse("") + "):");
        try {
            onThread(() -> {
                models.forEach(m -> lines.add("  " + m.summary()));
                return null;
            });
        } catch (RuntimeException e) {
            lines.add("  (no summary: " + e.getMessage() + ")");
        }
        return lines;
    }

    /** Every model's attention steps over the run, against the step model the trace was sized by. */
    StepFit stepFit() {
        return onThread(() -> StepFit.sum(models.stream().map(ModelAttention::fit).toList()));
    }

    @Override
    public void close() {
        try {
            onThread(() -> {
                if (queryBuffer != null) {
                    cuStreamSynchronize(stream);
                    cuMemFree(query);
                    cuMemFree(out);
                    cuEventDestroy(start);
                    cuEventDestroy(stop);
                    cuStreamDestroy(stream);
                }
                models.forEach(ModelAttention::close);
                return null;
            });
        } finally {
            thread.shutdown();
        }
    }

    private <T> T onThread(Callable<T> work) {
        try {
            return thread.submit(work).get(WAIT_S, TimeUnit.SECONDS);
        } catch (ExecutionException e) {
            throw e.getCause() instanceof RuntimeException r ? r : new IllegalStateException(e.getCause());
        } catch (TimeoutException e) {
            throw new IllegalStateException("the attention thread did not answer within " + WAIT_S + " s", e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted while waiting for the attention thread", e);
        }
    }
}
