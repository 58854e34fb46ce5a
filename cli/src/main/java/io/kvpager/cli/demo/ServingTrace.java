package io.kvpager.cli.demo;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.SplittableRandom;

/**
 * A seeded, bursty serving trace for several models sharing one GPU.
 *
 * <p>The run is cut into slots, one per model per round, and each model bursts in its own slots: a
 * burst is sized so that, at its peak, that model alone wants about {@link #BURST_SHARE} of the
 * GPU, more than a static split would give it. Bursts of neighbouring slots overlap with the tail
 * of the previous one, so memory has to move from model to model for both to be served. Between
 * bursts each model keeps a trickle of small requests, and each model's first request arrives at
 * once with a short answer, so every model is served even in a short run.
 *
 * <p>Output lengths follow the slot length (a request decodes one token per step), prompt lengths
 * follow a long-context serving mix; both are drawn from one {@link SplittableRandom} seeded by
 * the caller, so the same seed gives the same trace.
 */
public final class ServingTrace {

    /** Share of the GPU one model's burst wants at its peak. */
    static final double BURST_SHARE = 0.8;
    /** Share of the GPU one model's trickle wants between bursts. */
    static final double TRICKLE_SHARE = 0.05;
    /** A round of slots (one per model) lasts about this long in long runs. */
    static final Duration ROUND = Duration.ofSeconds(20);
    /** Prompt lengths: uniform between these, in tokens. */
    static final int PROMPT_MIN = 512;
    static final int PROMPT_MAX = 4096;

    private ServingTrace() {
    }

    /**
     * Generates the trace.
     *
     * @param models the models, indexed as in {@link TraceRequest#model()}
     * @param tp ranks per model, all on the shared GPU
     * @param gpuBytes capacity of the shared GPU
     * @param duration length of the run
     * @param step length of one decode step
     * @param seed the random seed
     * @return requests sorted by arrival
     */
    public static List<TraceRequest> generate(List<ModelProfile> models, int tp, long gpuBytes, Duration duration,
            Duration step, long seed) {
        if (models.isEmpty()) {
            throw new IllegalArgumentException("a trace needs at least one model");
        }
        long runMs = duration.toMillis();
        long stepMs = step.toMillis();
        if (stepMs <= 0 || runMs < 10 * stepMs) {
            throw new IllegalArgumentException("a run of " + runMs + " ms is too short for steps of " + stepMs + " ms; give it at least 10 steps");
        }
        SplittableRandom random = new SplittableRandom(seed);
        List<TraceRequest> requests = new ArrayList<>();
        int rounds = (int) Math.max(1, Math.round((double) runMs / ROUND.toMillis()));
        int slots = rounds * models.size();
        long slotMs = runMs / slots;
        // A request lives its prefill steps plus one step per output token; keep most within ~1.5 slots.
        int slotSteps = (int) Math.max(4, slotMs / stepMs);
        int outputMin = Math.max(1, slotSteps / 5);
        int outputMax = Math.max(outputMin + 1, slotSteps);
        double meanLiveTokens = (PROMPT_MIN + PROMPT_MAX) / 2.0 + (outputMin + outputMax) / 4.0;
        int[] nextId = {0};

        for (int m = 0; m < models.size(); m++) {
            ModelProfile model = models.get(m);
            double tokensAtPeak = BURST_SHARE * gpuBytes / model.bytesPerToken(tp);
            int burstSize = (int) Math.max(1, Math.round(tokensAtPeak / meanLiveTokens));
            // First request: at once, short, so the model is served in any run.
            requests.add(new TraceRequest(nextId[0]++, m, 0, PROMPT_MIN, outputMin));
            for (int round = 0; round < rounds; round++) {
                long slotStart = (long) (round * models.size() + m) * slotMs;
                long jitter = slotMs / 10 == 0 ? 0 : random.nextLong(slotMs / 10);
                long windowMs = Math.max(stepMs, slotMs / 4);
                for (int i = 0; i < burstSize; i++) {
                    long arrival = slotStart + jitter + random.nextLong(windowMs);
                    requests.add(request(nextId, m, arrival, random, outputMin, outputMax));
                }
            }
            // Trickle: the arrival rate that keeps TRICKLE_SHARE of the GPU busy with requests of mean lifetime.
            double trickleLive = TRICKLE_SHARE * gpuBytes / model.bytesPerToken(tp) / meanLiveTokens;
            double lifetimeMs = (outputMin + outputMax) / 2.0 * stepMs;
            double gapMs = lifetimeMs / Math.max(trickleLive, 1e-9);
            for (double t = gapMs * random.nextDouble(); t < runMs; t += gapMs * (0.5 + random.nextDouble())) {
                requests.add(request(nextId, m, (long) t, random, outputMin, outputMax));
            }
        }
        requests.sort(Comparator.comparingLong(TraceRequest::arrivalMs).thenComparingInt(TraceRequest::id));
        return List.copyOf(requests);
    }

    private static TraceRequest request(int[] nextId, int model, long arrivalMs, SplittableRandom random, int outputMin, int outputMax) {
        int prompt = random.nextInt(PROMPT_MIN, PROMPT_MAX + 1);
        int output = random.nextInt(outputMin, outputMax + 1);
        return new TraceRequest(nextId[0]++, model, arrivalMs, prompt, output);
    }
}
