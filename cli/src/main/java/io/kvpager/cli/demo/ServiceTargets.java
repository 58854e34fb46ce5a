package io.kvpager.cli.demo;

import java.time.Duration;
import java.util.Objects;

/**
 * The service-level targets a request of the demo meets or misses: its time to first token
 * (arrival to its first decode step) and its time per output token (first token to last, over the
 * tokens after the first).
 *
 * @param ttft the most time to first token that meets the target
 * @param tpot the most time per output token that meets the target
 */
public record ServiceTargets(Duration ttft, Duration tpot) {

    /** The default time to first token: 50 decode steps of 20 ms, queueing included. */
    public static final String DEFAULT_TTFT = "1s";
    /** The default time per output token: five 20 ms decode steps. */
    public static final String DEFAULT_TPOT = "100ms";

    public ServiceTargets {
        Objects.requireNonNull(ttft, "ttft");
        Objects.requireNonNull(tpot, "tpot");
        if (ttft.toMillis() < 1) {
            throw new IllegalArgumentException("--slo-ttft must be at least 1 ms, got " + ttft.toMillis() + " ms");
        }
        if (tpot.toMillis() < 1) {
            throw new IllegalArgumentException("--slo-tpot must be at least 1 ms, got " + tpot.toMillis() + " ms");
        }
    }

    /** Whether a finished request with these latencies met both targets. */
    boolean met(long ttftMs, double tpotMs) {
        return ttftMs <= ttft.toMillis() && tpotMs <= tpot.toMillis();
    }
}
