package io.kvpager.cli.demo;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.SplittableRandom;

/**
 * A seeded, bursty serving trace for several models sharing one GPU, in one of the shapes of
 * {@link TracePreset}; this describes {@link TracePreset#ROTATING}, the others differ as their
 * constants say.
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
    /** {@link TracePreset#STEADY_BURSTS}: share of the GPU one model's steady base wants. */
    static final double STEADY_BASE_SHARE = 0.15;
    /** {@link TracePreset#STEADY_BURSTS}: share of the GPU one model's burst wants at its peak. */
    static final double STEADY_BURST_SHARE = 0.6;
    /** A round of slots (one per model) lasts about this long in long runs. */
    static final Duration ROUND = Duration.ofSeconds(20);
    /** Prompt lengths: uniform between these, in tokens. */
    static final int PROMPT_MIN = 512;
    static final int PROMPT_MAX = 4096;

    private ServingTrace() {
    }

    /** The {@link TracePreset#ROTATING} trace. */
    public static List<TraceRequest> generate(List<ModelProfile> models, int tp, long gpuBytes, Duration duration,
            Duration step, long seed) {
        return generate(TracePreset.ROTATING, models, tp, gpuBytes, duration, step, seed);
    }

    /**
     * Generates the trace.
     *
     * @param preset the shape of the trace
     * @param models the models, indexed as in {@link TraceRequest#model()}
     * @param tp ranks per model, all on the shared GPU
     * @param gpuBytes capacity of the shared GPU
     * @param duration length of the run
     * @param step length of one decode step
     * @param seed the random seed
     * @return requests sorted by arrival
     */
    public static List<TraceRequest> generate(TracePreset preset, List<ModelProfile> models, int tp, long gpuBytes, Duration duration,
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
        int n = models.size();
        int rounds = (int) Math.max(1, Math.round((double) runMs / ROUND.toMillis()));
        int slots = rounds * n;
        long slotMs = runMs / slots;
        long roundMs = slotMs * n;
        // A request lives its prefill steps plus one step per output token; keep most within ~1.5 slots.
        int slotSteps = (int) Math.max(4, slotMs / stepMs);
        int outputMin = Math.max(1, slotSteps / 5);
        int outputMax = Math.max(outputMin + 1, slotSteps);
        double meanLiveTokens = (PROMPT_MIN + PROMPT_MAX) / 2.0 + (outputMin + outputMax) / 4.0;
        double burstShare = preset == TracePreset.STEADY_BURSTS ? STEADY_BURST_SHARE : BURST_SHARE;
        double trickleShare = preset == TracePreset.STEADY_BURSTS ? STEADY_BASE_SHARE : TRICKLE_SHARE;
        int[] nextId = {0};

        for (int m = 0; m < n; m++) {
            ModelProfile model = models.get(m);
            double tokensAtPeak = burstShare * gpuBytes / model.bytesPerToken(tp);
            int burstSize = (int) Math.max(1, Math.round(tokensAtPeak / meanLiveTokens));
            // First request: at once, short, so the model is served in any run.
            requests.add(new TraceRequest(nextId[0]++, m, 0, PROMPT_MIN, outputMin));
            for (int round = 0; round < rounds; round++) {
                long burstStart;
                long windowMs;
                switch (preset) {
                    case ROTATING -> {
                        long jitter = slotMs / 10 == 0 ? 0 : random.nextLong(slotMs / 10);
                        burstStart = (long) (round * n + m) * slotMs + jitter;
                        windowMs = Math.max(stepMs, slotMs / 4);
                    }
                    case OVERLAPPING -> {
                        long quarter = roundMs / (n + 1);
                        burstStart = round * roundMs + m * quarter;
                        windowMs = Math.max(stepMs, quarter * 3 / 2);
                    }
                    case STEADY_BURSTS -> {
                        windowMs = Math.max(stepMs, slotMs / 4);
                        burstStart = round * roundMs + random.nextLong(Math.max(1, roundMs - windowMs));
                    }
                    default -> throw new IllegalStateException("unknown preset " + preset);
                }
                for (int i = 0; i < burstSize; i++) {
                    long arrival = burstStart + random.nextLong(windowMs);
                    if (arrival < runMs) {
                        requests.add(request(nextId, m, arrival, random, outputMin, outputMax));
                    }
                }
            }
            // Trickle (or base): the arrival rate that keeps trickleShare of the GPU busy with requests of mean lifetime.
            double trickleLive = trickleShare * gpuBytes / model.bytesPerToken(tp) / meanLiveTokens;
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
