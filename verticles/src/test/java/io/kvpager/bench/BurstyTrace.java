package io.kvpager.bench;

import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;

/**
 * A seeded serving trace: requests arrive as a Poisson stream whose rate switches between a calm
 * and a burst state (a two-state Markov chain, one draw per engine step); each request has a
 * prompt and an output length drawn from log-normal distributions, as chat traffic has.
 */
final class BurstyTrace {

    /** One request: tokens to prefill, tokens to generate. */
    record Request(int promptTokens, int outputTokens) {
    }

    private final SplittableRandom random;
    private final double calmRate;
    private final double burstRate;
    private final double toBurst;
    private final double toCalm;
    private boolean burst;
    private long bursts;

    /**
     * @param calmRate mean arrivals per step when calm
     * @param burstRate mean arrivals per step during a burst
     * @param toBurst chance per step that a calm period ends
     * @param toCalm chance per step that a burst ends
     */
    BurstyTrace(long seed, double calmRate, double burstRate, double toBurst, double toCalm) {
        this.random = new SplittableRandom(seed);
        this.calmRate = calmRate;
        this.burstRate = burstRate;
        this.toBurst = toBurst;
        this.toCalm = toCalm;
    }

    /** The requests arriving in the next step. */
    List<Request> next() {
        if (burst ? random.nextDouble() < toCalm : random.nextDouble() < toBurst) {
            burst = !burst;
            bursts += burst ? 1 : 0;
        }
        int n = poisson(burst ? burstRate : calmRate);
        List<Request> out = new ArrayList<>(n);
        for (int i = 0; i < n; i++) {
            out.add(new Request(logNormal(1_000, 0.8, 16, 16_000), logNormal(300, 0.8, 1, 4_000)));
        }
        return out;
    }

    long bursts() {
        return bursts;
    }

    private int poisson(double mean) {
        double limit = Math.exp(-mean);
        double p = 1;
        int k = 0;
        do {
            k++;
            p *= random.nextDouble();
        } while (p > limit);
        return k - 1;
    }

    private int logNormal(double median, double sigma, int min, int max) {
        double gaussian = Math.sqrt(-2 * Math.log(1 - random.nextDouble())) * Math.cos(2 * Math.PI * random.nextDouble());
        return Math.clamp(Math.round(median * Math.exp(sigma * gaussian)), min, max);
    }
}
