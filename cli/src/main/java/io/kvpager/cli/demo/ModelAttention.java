package io.kvpager.cli.demo;

import static jcuda.driver.JCudaDriver.cuEventElapsedTime;
import static jcuda.driver.JCudaDriver.cuEventRecord;
import static jcuda.driver.JCudaDriver.cuEventSynchronize;

import io.kvpager.Geometry;
import io.kvpager.attention.AttentionShape;
import io.kvpager.attention.DecodeBatch;
import io.kvpager.attention.DeviceBatch;
import io.kvpager.attention.DeviceBuffer;
import io.kvpager.attention.GroupBlocks;
import io.kvpager.attention.PagedDecodeAttention;
import java.util.List;
import jcuda.driver.CUevent;
import jcuda.driver.CUstream;

/**
 * One model's decode step on the GPU in the demo: the read of its weights ({@link WeightReads}),
 * then attention of every layer of every rank over the step's live sequences, on the attention
 * thread, timed on the GPU with events; sums what it read.
 */
final class ModelAttention implements AutoCloseable {

    final ModelProfile model;
    final AttentionShape shape;
    private final Geometry geometry;
    private final List<PagedDecodeAttention> ranks;
    private final List<DeviceBatch> batches;
    private final WeightReads weights;
    private long steps;
    private long weightSteps;
    private double weightMillis;
    private long sequences;
    private double gpuMillis;
    private double maxStepMillis;
    private long bytes;

    ModelAttention(ModelProfile model, AttentionShape shape, Geometry geometry, List<PagedDecodeAttention> ranks, WeightReads weights) {
        this.model = model;
        this.weights = weights;
        this.shape = shape;
        this.geometry = geometry;
        this.ranks = ranks;
        this.batches = ranks.stream().map(PagedDecodeAttention::newBatch).toList();
    }

    /** The weights' read, then attention of every layer on every rank for one step; returns when the GPU is done. */
    void step(int[][] tables, int[] lengths, DeviceBuffer query, DeviceBuffer out, CUstream stream, CUevent start,
              CUevent stop) {
        if (weights.bytes() > 0) {
            cuEventRecord(start, stream);
            weights.read(stream);
            cuEventRecord(stop, stream);
            cuEventSynchronize(stop);
            float[] ms = new float[1];
            cuEventElapsedTime(ms, start, stop);
            weightSteps++;
            weightMillis += ms[0];
        }
        if (tables.length == 0) {
            return;
        }
        DecodeBatch batch = DecodeBatch.of(tables, lengths);
        GroupBlocks held = new GroupBlocks(geometry.totalBlocks());
        for (int[] table : tables) {
            held.add(table);
        }
        for (int r = 0; r < ranks.size(); r++) {
            ranks.get(r).load(batches.get(r), batch, held, stream);
        }
        cuEventRecord(start, stream);
        for (int r = 0; r < ranks.size(); r++) {
            for (int layer = 0; layer < geometry.layers(); layer++) {
                ranks.get(r).launch(batches.get(r), layer, query, out, stream);
            }
        }
        cuEventRecord(stop, stream);
        cuEventSynchronize(stop);
        float[] ms = new float[1];
        cuEventElapsedTime(ms, start, stop);
        steps++;
        sequences += tables.length;
        gpuMillis += ms[0];
        maxStepMillis = Math.max(maxStepMillis, ms[0]);
        bytes += batch.kvBytes(shape) * geometry.layers() * ranks.size();
    }

    /** Its attention steps so far, against the step model the trace was sized by. */
    StepFit fit() {
        return StepFit.of(model, ranks.size(), steps, bytes, gpuMillis * 1e6);
    }

    /** One line: steps, sequences per step, GPU time per step, KV bandwidth; then the weights' reads. */
    String summary() {
        String attention = steps == 0 ? String.format("%-5s no decode step ran attention", model.name())
                : String.format("%-5s %6d steps  %6.1f sequences/step  %8.3f ms/step (max %.3f)  %7.1f MiB KV/step  %6.2f TB/s",
                        model.name(), steps, (double) sequences / steps, gpuMillis / steps, maxStepMillis,
                        bytes / (double) steps / (1 << 20), bytes / (gpuMillis * 1e-3) / 1e12);
        if (weightSteps == 0) {
            return attention;
        }
        return attention + String.format("; weights %.1f GB read in %.3f ms/step (%.2f TB/s)", weights.bytes() / 1e9,
                weightMillis / weightSteps, weights.bytes() * weightSteps / (weightMillis * 1e-3) / 1e12);
    }

    @Override
    public void close() {
        weights.close();
        batches.forEach(DeviceBatch::close);
        ranks.forEach(PagedDecodeAttention::close);
    }
}
