package io.kvpager.cli.demo;

import io.kvpager.internal.options.OptionRules;
import java.nio.file.Path;
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
 * @param chart where the memory chart is written
 * @param idleHandlePages the most page ids' worth of unmapped handles each rank keeps while its pages churn
 * @param gpuMemoryPercent the share of the GPU the caches may take, or {@code null} for the device's default
 * @param policy how the models share the GPU's budget
 * @param trace the trace served
 * @param targets the service-level targets each request is checked against
 */
public record DemoSettings(List<ModelProfile> models, int tp, long seed, Duration duration, Duration step, long gpuBytes,
        String device, int gpu, Map<String, Long> limits, Path chart, int idleHandlePages,
        Integer gpuMemoryPercent, SharingPolicy policy, TraceChoice trace, ServiceTargets targets) {

    public DemoSettings {
        models = List.copyOf(models);
        limits = Map.copyOf(limits);
        Objects.requireNonNull(duration, "duration");
        Objects.requireNonNull(step, "step");
        Objects.requireNonNull(device, "device");
        Objects.requireNonNull(chart, "chart");
        Objects.requireNonNull(policy, "policy");
        Objects.requireNonNull(trace, "trace");
        Objects.requireNonNull(targets, "targets");
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
        for (ModelProfile model : models) {
            if (model.bytesPerPageId(tp) > gpuBytes) {
                throw new IllegalArgumentException("--capacity " + gpuBytes + " bytes cannot hold one page of model " + model.name()
                        + " (" + model.bytesPerPageId(tp) + " bytes on " + tp + " ranks)");
            }
        }
    }

    /** What a static split gives each model: an equal share of the GPU (the chart's dashed line). */
    public long staticShareBytes() {
        return gpuBytes / models.size();
    }

    /** The same run under another policy. */
    public DemoSettings withPolicy(SharingPolicy other) {
        return new DemoSettings(models, tp, seed, duration, step, gpuBytes, device, gpu, limits, chart, idleHandlePages,
                gpuMemoryPercent, other, trace, targets);
    }

    /** The same run drawing its chart to another file. */
    public DemoSettings withChart(Path other) {
        return new DemoSettings(models, tp, seed, duration, step, gpuBytes, device, gpu, limits, other, idleHandlePages,
                gpuMemoryPercent, policy, trace, targets);
    }
}
