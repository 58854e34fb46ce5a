package io.kvpager.cli.demo;

import java.util.Map;

/**
 * One model's outcome of a demo run.
 *
 * @param model the model
 * @param arrived requests that arrived
 * @param served requests that finished
 * @param unfinished requests that had arrived but were still running (or waiting for a retry) when the run ended
 * @param tokens output tokens decoded
 * @param allocs allocation calls
 * @param misses allocation misses by reason, GPU-share refusals apart from the model's own limit
 * @param preemptions requests preempted (after a miss or a failure)
 * @param p50Micros median allocation latency
 * @param p99Micros 99th-percentile allocation latency
 * @param maps page ids mapped
 * @param unmaps page ids unmapped
 * @param peakBytes most GPU memory held at once, all ranks
 * @param meanBytes time-weighted mean of GPU memory held
 * @param staticRefusedAllocs allocations served here that a static split would have refused
 * @param staticRefusedRequests requests with at least one such allocation
 * @param failures failed calls by failure code (a healthy run has none)
 */
public record ModelReport(ModelProfile model, long arrived, long served, long unfinished, long tokens, long allocs, Map<DemoMiss, Long> misses,
        long preemptions, double p50Micros, double p99Micros, long maps, long unmaps, long peakBytes, long meanBytes,
        long staticRefusedAllocs, int staticRefusedRequests, Map<String, Long> failures) {

    public ModelReport {
        misses = Map.copyOf(misses);
        failures = Map.copyOf(failures);
    }

    public long totalMisses() {
        return misses.values().stream().mapToLong(Long::longValue).sum();
    }

    public long totalFailures() {
        return failures.values().stream().mapToLong(Long::longValue).sum();
    }
}
