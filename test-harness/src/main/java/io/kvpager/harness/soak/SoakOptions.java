package io.kvpager.harness.soak;

import io.kvpager.Layout;

import java.time.Duration;

/**
 * How long and how hard a {@link Soak} runs.
 *
 * @param ops allocations and frees to make (fences and trims come on top)
 * @param seed seeds every random choice: operations, sizes, faults
 * @param faultRate the chance, per operation, that a random driver fault is armed on a random rank
 * @param checkEvery operations between two checks of the ledger against the devices
 * @param inFlight operations in flight at once
 * @param callBound how long any one operation may take before it counts as stuck
 * @param heapBoundBytes how much more heap, after GC, the end may use than the start
 * @param layout the pool's layout
 */
public record SoakOptions(long ops, long seed, double faultRate, int checkEvery, int inFlight, Duration callBound,
                          long heapBoundBytes, Layout layout) {

    public SoakOptions {
        if (ops < 1 || faultRate < 0 || faultRate > 1 || checkEvery < 1 || inFlight < 1 || callBound == null
                || heapBoundBytes < 0 || layout == null) {
            throw new IllegalArgumentException("soak options out of range: ops " + ops + ", faultRate " + faultRate
                    + ", checkEvery " + checkEvery + ", inFlight " + inFlight + ", callBound " + callBound
                    + ", heapBoundBytes " + heapBoundBytes + ", layout " + layout);
        }
    }

    /** {@code ops} operations with 1 % faults, a check every 10,000, eight in flight, PAGE_MAJOR. */
    public static SoakOptions of(long ops, long seed) {
        return new SoakOptions(ops, seed, 0.01, 10_000, 8, Duration.ofSeconds(10), 32L << 20, Layout.PAGE_MAJOR);
    }

    public SoakOptions withLayout(Layout layout) {
        return new SoakOptions(ops, seed, faultRate, checkEvery, inFlight, callBound, heapBoundBytes, layout);
    }
}
