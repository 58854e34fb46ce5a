package io.kvpager.cli.demo;

import io.kvpager.internal.options.OptionRules;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Objects;

/**
 * What one demo run does.
 *
 * @param models the models sharing the GPU, each served by its own cache instance
 * @param tp tensor-parallel ranks per model, all on the shared GPU
 * @param seed seed of the serving trace
 * @param duration how long requests keep arriving and being served
 * @param step length of one decode step (one batch)
 * @param gpuBytes memory of the shared GPU
 * @param device {@code sim} or {@code cuda}
 * @param gpu index of the shared GPU
 * @param limits optional memory limit per rank, by model name
 * @param idleHandlePages the most page ids' worth of unmapped handles each rank keeps while its pages churn
 * @param gpuMemoryPercent the share of the GPU the models may take, weights and caches together, or {@code null} for
 *     {@link #DEFAULT_MEMORY_PERCENT}
 * @param policy how the models share the GPU's budget
 * @param trace the trace served
 * @param targets the service-level targets each request is checked against
 * @param weights how the models hold their weights on the GPU: memory the caches cannot have, read by every step
 * @param load the mean KV the trace offers, in pages, as a share of the caches' memory ({@link OfferedLoad})
 * @param attentionBandwidth the bytes per second the GPU's decode attention reads KV at: the trace's rate is
 *     scaled to it, and the simulated device models its attention at it ({@link SimAttention})
 */
public record DemoSettings(List<ModelProfile> models, int tp, long seed, Duration duration, Duration step, long gpuBytes,
        String device, int gpu, Map<String, Long> limits, int idleHandlePages,
        Integer gpuMemoryPercent, SharingPolicy policy, TraceChoice trace, ServiceTargets targets, WeightFormat weights,
        double load, double attentionBandwidth) {

    /** The share of the GPU the models take by default: the CUDA context and the attention buffers need the rest. */
    public static final int DEFAULT_MEMORY_PERCENT = 90;
    /** The load a run offers by default: a service's mean below what the GPU holds, its bursts above a model's share (docs/sharing.md). */
    public static final String DEFAULT_LOAD = "0.9";
    /** The most load a run may offer: four times the caches' memory is an overload that measures nothing more. */
    public static final double MAX_LOAD = 4;
    /** The attention bandwidth by default, in TB/s: the H200's, as measured (docs/sharing.md); {@link SimAttention#H200_BANDWIDTH_BYTES_PER_S} is read from it. */
    public static final String DEFAULT_ATTENTION_TBPS = "4.3";
    /** The most attention bandwidth a run may name, in TB/s: above any GPU's memory. */
    public static final double MAX_ATTENTION_TBPS = 100;

    public DemoSettings {
        models = List.copyOf(models);
        limits = Map.copyOf(limits);
        Objects.requireNonNull(duration, "duration");
        Objects.requireNonNull(step, "step");
        Objects.requireNonNull(device, "device");
        Objects.requireNonNull(policy, "policy");
        Objects.requireNonNull(trace, "trace");
        Objects.requireNonNull(targets, "targets");
        Objects.requireNonNull(weights, "weights");
        if (models.isEmpty()) {
            throw new IllegalArgumentException("--models needs at least one model");
        }
        if (models.stream().map(ModelProfile::name).distinct().count() != models.size()) {
            throw new IllegalArgumentException("--models names a model twice: " + models.stream().map(ModelProfile::name).toList());
        }
        if (tp < 1 || tp > 8) {
            throw new IllegalArgumentException("--tp must be 1..8 (ranks of one model on one GPU), got " + tp);
        }
        OptionRules.atLeast("--gpu", gpu, 0);
        OptionRules.atLeast("--idle-handle-pages", idleHandlePages, 0);
        if (gpuMemoryPercent != null) {
            OptionRules.percent("--gpu-memory-percent", gpuMemoryPercent);
        }
        if (!(attentionBandwidth > 0 && attentionBandwidth <= MAX_ATTENTION_TBPS * 1e12)) {
            throw new IllegalArgumentException("--attention-bandwidth must be above 0 and at most " + (int) MAX_ATTENTION_TBPS
                    + " TB/s (the GPU's decode attention reads, e.g. 4.3 for an H200), got " + attentionBandwidth / 1e12);
        }
        if (!(load > 0 && load <= MAX_LOAD)) {
            throw new IllegalArgumentException("--load must be above 0 and at most " + (int) MAX_LOAD
                    + " (the mean KV the trace offers, in pages, over the caches' memory), got " + load);
        }
        if (step.toMillis() < 1) {
            throw new IllegalArgumentException("--step must be at least 1 ms, got " + step.toMillis() + " ms");
        }
        if (duration.toMillis() < 10 * step.toMillis()) {
            throw new IllegalArgumentException("--duration must be at least 10 steps (" + 10 * step.toMillis() + " ms), got "
                    + duration.toMillis() + " ms");
        }
        for (String name : limits.keySet()) {
            if (models.stream().noneMatch(m -> m.name().equals(name))) {
                throw new IllegalArgumentException("--limit names model '" + name + "', which is not in --models "
                        + models.stream().map(ModelProfile::name).toList());
            }
        }
        if (gpuBytes < 1) {
            throw new IllegalArgumentException("--capacity must be at least 1 byte, got " + gpuBytes);
        }
        // the weights must leave the caches some of the GPU (checked again against a real device's memory when a run deploys)
        cachePercent(models, weights, weightBytes(models, weights), gpuMemoryPercent != null ? gpuMemoryPercent : DEFAULT_MEMORY_PERCENT,
                gpuBytes);
        for (ModelProfile model : models) {
            if (model.bytesPerPageId(tp) > gpuBytes) {
                throw new IllegalArgumentException("--capacity " + gpuBytes + " bytes cannot hold one page of model " + model.name()
                        + " (" + model.bytesPerPageId(tp) + " bytes on " + tp + " ranks)");
            }
        }
    }

    /** The share of the GPU the models take, weights and caches together. */
    public int memoryPercent() {
        return gpuMemoryPercent != null ? gpuMemoryPercent : DEFAULT_MEMORY_PERCENT;
    }

    /** Bytes of every model's weights on the GPU, over all ranks. */
    public long weightBytes() {
        return weightBytes(models, weights);
    }

    private static long weightBytes(List<ModelProfile> models, WeightFormat weights) {
        return models.stream().mapToLong(m -> m.weightBytes(weights)).sum();
    }

    /**
     * The share of a GPU of {@code totalBytes} the caches may take between them: {@link #memoryPercent}
     * less the weights, rounded down to a whole percent.
     *
     * @throws IllegalArgumentException when the weights leave the caches less than one percent
     */
    public int cachePercent(long totalBytes) {
        return cachePercent(models, weights, weightBytes(), memoryPercent(), totalBytes);
    }

    private static int cachePercent(List<ModelProfile> models, WeightFormat weights, long weightBytes, int memoryPercent,
            long totalBytes) {
        long weightPercent = (long) Math.ceil(weightBytes * 100.0 / totalBytes);
        long left = memoryPercent - weightPercent;
        if (left < 1) {
            // name only what can help: a smaller format than this one, and a larger share while one is left below 100 %
            String formats = weights == WeightFormat.BF16 ? "--weights fp8 or none" : "--weights none";
            String share = weightPercent < 99 ? " or a larger --gpu-memory-percent" : "";
            throw new IllegalArgumentException("the weights of " + models.stream().map(ModelProfile::name).toList() + " as " + weights.flag()
                    + " take " + weightPercent + " % of the GPU's " + totalBytes + " bytes, leaving nothing of the " + memoryPercent
                    + " % the models may take for their KV: use " + formats + ", fewer --models" + share);
        }
        return (int) left;
    }

    /** The bytes the caches share on a GPU of {@code totalBytes}: {@link #cachePercent} of it. */
    public long cacheBudgetBytes(long totalBytes) {
        return totalBytes / 100 * cachePercent(totalBytes);
    }

    /** The same run under another policy. */
    public DemoSettings withPolicy(SharingPolicy other) {
        return new DemoSettings(models, tp, seed, duration, step, gpuBytes, device, gpu, limits, idleHandlePages,
                gpuMemoryPercent, other, trace, targets, weights, load, attentionBandwidth);
    }

    /** The same run with the weights held as {@code other}. */
    public DemoSettings withWeights(WeightFormat other) {
        return new DemoSettings(models, tp, seed, duration, step, gpuBytes, device, gpu, limits, idleHandlePages,
                gpuMemoryPercent, policy, trace, targets, other, load, attentionBandwidth);
    }

    /** The same run on a GPU of {@code other} bytes (on cuda, the device's own memory, not {@code --capacity}). */
    public DemoSettings withGpuBytes(long other) {
        return new DemoSettings(models, tp, seed, duration, step, other, device, gpu, limits, idleHandlePages,
                gpuMemoryPercent, policy, trace, targets, weights, load, attentionBandwidth);
    }
}
