package io.kvpager.cli.demo;

import java.time.Duration;
import java.util.List;
import java.util.Locale;

/**
 * What a trace offers the GPU, by Little's law: the KV its requests would hold on average over the
 * run if each were served at once, living its prefill chunks plus one step per output token, with
 * half its output in the cache on average. Stated per model against that model's equal share of
 * the caches' memory (the static split), and in all against the whole of it: a trace offered more
 * than a model's third for that model backlogs under a static split; one offered more than the
 * whole backlogs under any policy.
 *
 * @param models the models, in the trace's order
 * @param perModel each model's mean KV demand over its equal share of the caches' memory
 * @param all every model's mean KV demand over the caches' memory
 */
public record OfferedLoad(List<String> models, List<Double> perModel, double all) {

    public OfferedLoad {
        models = List.copyOf(models);
        perModel = List.copyOf(perModel);
    }

    /**
     * @param gpuBytes the caches' memory, all models together
     * @param step how long a step is expected to take when the GPU is loaded
     */
    static OfferedLoad of(List<ModelProfile> models, int tp, long gpuBytes, Duration duration, Duration step, List<TraceRequest> requests) {
        int n = models.size();
        double[] demand = new double[n];
        for (TraceRequest r : requests) {
            demand[r.model()] += meanBytesMs(models.get(r.model()), tp, step.toMillis(), r.promptTokens(), r.outputTokens());
        }
        long runMs = Math.max(1, duration.toMillis());
        double share = gpuBytes / (double) n;
        double total = 0;
        Double[] per = new Double[n];
        for (int m = 0; m < n; m++) {
            per[m] = demand[m] / runMs / share;
            total += demand[m] / runMs;
        }
        return new OfferedLoad(models.stream().map(ModelProfile::name).toList(), List.of(per), total / gpuBytes);
    }

    /** One request's KV bytes held, times how long it holds them (ms), when served at once. */
    static double meanBytesMs(ModelProfile model, int tp, long stepMs, int promptTokens, int outputTokens) {
        double liveMs = (Math.ceil(promptTokens / (double) ModelServer.PREFILL_CHUNK) + outputTokens) * stepMs;
        return (promptTokens + outputTokens / 2.0) * model.bytesPerToken(tp) * liveMs;
    }

    /** E.g. "offered KV (mean over the run): 7b 1.21x its third, 13b 0.80x, 70b 0.95x; all 0.99x the caches' memory". */
    @Override
    public String toString() {
        StringBuilder out = new StringBuilder("offered KV (mean over the run, each request served at once):");
        for (int m = 0; m < models.size(); m++) {
            out.append(String.format(Locale.ROOT, " %s %.2fx%s", models.get(m), perModel.get(m), m == 0 ? " its equal share" : ""))
                    .append(m == models.size() - 1 ? ";" : ",");
        }
        return out.append(String.format(Locale.ROOT, " all %.2fx the caches' memory", all)).toString();
    }
}
