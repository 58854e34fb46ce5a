package io.kvpager.cli.demo;

/**
 * The GPU's budget against what its broker granted, sampled every {@value DemoRun#SAMPLE_MS} ms
 * through the run: the broker's own count of bytes taken by every cache (leases included), and the
 * sum of the caches' leases, each read from its cache's stats.
 *
 * @param samples samples taken
 * @param overGranted samples where the broker's taken bytes exceeded the budget
 * @param capacityBytes the budget all caches share
 * @param maxTakenBytes the most the broker counted as taken in one sample
 * @param maxLeasedSumBytes the largest sum of the caches' leases in one sample (read one cache after another)
 */
public record GrantSamples(long samples, long overGranted, long capacityBytes, long maxTakenBytes, long maxLeasedSumBytes) {

    /** Whether any sample over-granted. */
    public boolean anyOverGrant() {
        return overGranted > 0;
    }
}
