package io.kvpager.cli.demo;

import java.time.Duration;
import java.util.List;
import java.util.Locale;

/**
 * What a trace offers the GPU, by Little's law, in what it costs the caches: the pages its
 * requests would hold on average over the run if each were served at once, living its prefill
 * chunks plus one step per output token, at the step the GPU takes under that load. Stated per
 * model against that model's equal share of the caches' memory (the static split), and in all
 * against the whole of it: a trace offered more than a model's share for that model backlogs under
 * a static split; one offered more than the whole backlogs under any policy.
 *
 * <p>Pages, not tokens: a page goes back only once all its blocks are free, and the demo's engine
 * grows every request in pages of its own, so a request holds its tokens rounded up to whole pages
 * (a 70b page at tp 2 holds 2,048 tokens, a 7b one 512). The step: every model's step reads its
 * weights and the KV of its decoding requests on one device ({@link SimAttention}), so a step lasts
 * the weights and launches of every model plus the KV they read, never less than the engines'
 * {@code --step}; the KV read grows with the load, so the step is solved for the trace itself.
 *
 * @param models the models, in the trace's order
 * @param perModel each model's mean pages held over its equal share of the caches' memory
 * @param all every model's mean pages held over the caches' memory
 * @param step the step the estimate assumes: what the GPU takes under this load
 * @param bandwidth the bytes per second the step's attention reads KV at
 */
public record OfferedLoad(List<String> models, List<Double> perModel, double all, Duration step, double bandwidth) {

    public OfferedLoad {
        models = List.copyOf(models);
        perModel = List.copyOf(perModel);
    }

    /**
     * What a trace is sized against: the models, how they run, the caches' memory, the run's length,
     * the engines' step (the shortest a step lasts) and the bytes per second attention reads KV at.
     */
    record Scale(List<ModelProfile> models, int tp, WeightFormat weights, long cacheBytes, Duration duration, Duration minStep,
            double bandwidth) {

        Scale {
            models = List.copyOf(models);
        }

        long runMs() {
            return Math.max(1, duration.toMillis());
        }
    }

    /** The estimate for {@code requests}. */
    static OfferedLoad of(Scale scale, List<TraceRequest> requests) {
        return of(scale, Demand.of(scale, requests));
    }

    /** The estimate for a demand already summed. */
    static OfferedLoad of(Scale scale, Demand demand) {
        int n = scale.models().size();
        double stepMs = stepMs(scale, demand);
        double share = scale.cacheBytes() / (double) n;
        double total = 0;
        Double[] per = new Double[n];
        for (int m = 0; m < n; m++) {
            double meanBytes = demand.pageByteSteps[m] * stepMs / scale.runMs();
            per[m] = meanBytes / share;
            total += meanBytes;
        }
        return new OfferedLoad(scale.models().stream().map(ModelProfile::name).toList(), List.of(per), total / scale.cacheBytes(),
                Duration.ofNanos(Math.round(stepMs * 1e6)), scale.bandwidth());
    }

    /**
     * The step under the demand's load, in ms: the weights' read and the launches of every model
     * with requests, plus the KV their decode steps read, which is itself the demand's mean decoding
     * KV at that step: {@code s = c + k s}, so {@code s = c / (1 - k)}; the KV read is at most the
     * caches' memory. Never below the engines' step.
     */
    static double stepMs(Scale scale, Demand demand) {
        double fixedMs = 0;
        for (int m = 0; m < scale.models().size(); m++) {
            if (demand.pageByteSteps[m] > 0) {
                ModelProfile model = scale.models().get(m);
                fixedMs += (SimAttention.weightNanos(model, scale.weights()) + SimAttention.launchNanos(model, scale.tp())) / 1e6;
            }
        }
        double k = demand.readByteSteps / scale.runMs() / scale.bandwidth() * 1e3;
        double fullMs = fixedMs + scale.cacheBytes() / scale.bandwidth() * 1e3;
        double loadedMs = k < 1 ? Math.min(fixedMs / (1 - k), fullMs) : fullMs;
        return Math.max(scale.minStep().toNanos() / 1e6, loadedMs);
    }

    /**
     * What requests ask, per step of their model: the bytes of the pages each holds times the steps
     * it holds them, per model, and the bytes of KV their decode steps read, all models together.
     */
    static final class Demand {

        final double[] pageByteSteps;
        double readByteSteps;

        Demand(int models) {
            this.pageByteSteps = new double[models];
        }

        static Demand of(Scale scale, List<TraceRequest> requests) {
            Demand demand = new Demand(scale.models().size());
            for (TraceRequest r : requests) {
                demand.add(scale, r.model(), r.promptTokens(), r.outputTokens());
            }
            return demand;
        }

        /**
         * Adds one request: its prefill chunks holding its prompt's pages (the engine allocates the
         * whole context at admission), then one step per output token holding the pages of the
         * prompt and the output so far and reading its tokens.
         */
        void add(Scale scale, int m, int promptTokens, int outputTokens) {
            ModelProfile model = scale.models().get(m);
            int tp = scale.tp();
            long tokensPerPage = (long) model.geometry(tp, 1).blocksPerPage() * model.blockTokens();
            pageByteSteps[m] += pageSteps(tokensPerPage, promptTokens, outputTokens) * (double) model.bytesPerPageId(tp);
            double tokenSteps = (double) outputTokens * promptTokens + outputTokens * (outputTokens + 1.0) / 2;
            readByteSteps += tokenSteps * model.bytesPerToken(tp);
        }

        /** The same demand with every request kept with probability {@code keep}: its expectation. */
        Demand scaled(double keep) {
            Demand out = new Demand(pageByteSteps.length);
            for (int m = 0; m < pageByteSteps.length; m++) {
                out.pageByteSteps[m] = pageByteSteps[m] * keep;
            }
            out.readByteSteps = readByteSteps * keep;
            return out;
        }
    }

    /**
     * Page-steps of one request whose pages hold {@code tokensPerPage} tokens: its prefill steps at
     * the prompt's pages, then decode step {@code i} (1..output) at the pages of {@code prompt + i} tokens.
     */
    static double pageSteps(long tokensPerPage, int promptTokens, int outputTokens) {
        double prefillSteps = Math.ceil(promptTokens / (double) ModelServer.PREFILL_CHUNK);
        long promptPages = (promptTokens + tokensPerPage - 1) / tokensPerPage;
        return prefillSteps * promptPages + ceilSum(tokensPerPage, promptTokens + (long) outputTokens) - ceilSum(tokensPerPage, promptTokens);
    }

    /** The sum of ceil(x / t) over x = 1..n. */
    private static double ceilSum(long t, long n) {
        long q = n / t;
        long r = n % t;
        return t * (q * (q + 1) / 2.0) + (double) r * (q + 1);
    }

    /**
     * E.g. "offered KV in pages (mean over the run, each request served at once, steps of 31.0 ms, KV read at 4.3 TB/s):
     * 7b 1.21x its equal share, ...".
     */
    @Override
    public String toString() {
        StringBuilder out = new StringBuilder(String.format(Locale.ROOT,
                "offered KV in pages (mean over the run, each request served at once, steps of %.1f ms, KV read at %.1f TB/s):",
                step.toNanos() / 1e6, bandwidth / 1e12));
        for (int m = 0; m < models.size(); m++) {
            out.append(String.format(Locale.ROOT, " %s %.2fx%s", models.get(m), perModel.get(m), m == 0 ? " its equal share" : ""))
                    .append(m == models.size() - 1 ? ";" : ",");
        }
        return out.append(String.format(Locale.ROOT, " all %.2fx the caches' memory", all)).toString();
    }
}
