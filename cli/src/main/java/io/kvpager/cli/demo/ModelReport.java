package io.kvpager.cli.demo;

import java.util.List;
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
 * @param preemptions requests preempted (after a miss, a failure or a reclaim)
 * @param recomputedTokens tokens whose KV preemptions threw away (prompt prefilled and output decoded so far), each
 *     computed again when its request is admitted again: the work churn wastes
 * @param p50Micros median allocation latency
 * @param p99Micros 99th-percentile allocation latency
 * @param maps page ids mapped
 * @param unmaps page ids unmapped
 * @param peakBytes most GPU memory held at once, all ranks
 * @param meanBytes time-weighted mean of GPU memory held
 * @param failures failed calls by failure code (a healthy run has none)
 * @param service time to first token, time per output token and the targets met
 * @param reclaims what the cache asked this model's engine to give back and what it waited for
 * @param placement how the engine's requests lay in pages, and how reclaims were answered
 * @param work what the engine's steps did: prefill, prefill again after preemptions, steps sat out
 * @param requests every request that arrived, with when it got its first token, in arrival order
 */
public record ModelReport(ModelProfile model, long arrived, long served, long unfinished, long tokens, long allocs, Map<DemoMiss, Long> misses,
        long preemptions, long recomputedTokens, double p50Micros, double p99Micros, long maps, long unmaps, long peakBytes, long meanBytes,
        Map<String, Long> failures, Service service, Reclaims reclaims, Placement placement, Work work, List<Request> requests) {

    public ModelReport {
        misses = Map.copyOf(misses);
        failures = Map.copyOf(failures);
        requests = List.copyOf(requests);
    }

    public long totalMisses() {
        return misses.values().stream().mapToLong(Long::longValue).sum();
    }

    public long totalFailures() {
        return failures.values().stream().mapToLong(Long::longValue).sum();
    }

    /** Share of the arrived requests that finished meeting both service targets; NaN when none arrived. */
    public double sloAttainment() {
        return arrived == 0 ? Double.NaN : (double) service.metTargets() / arrived;
    }

    /**
     * What the requests saw, in ms (NaN when no request had one).
     *
     * @param firstTokens requests that got their first output token
     * @param ttftP50Ms median time to first token (arrival to first decode step), over those requests
     * @param ttftP99Ms its 99th percentile
     * @param tpotP99Ms 99th percentile of the time per output token over finished requests
     * @param metTargets finished requests that met both targets
     */
    public record Service(long firstTokens, double ttftP50Ms, double ttftP99Ms, double tpotP99Ms, long metTargets) {
    }

    /**
     * Reclaims of one model's cache.
     *
     * @param asked reclaims the engine was asked
     * @param blocksAsked blocks asked for over them
     * @param preemptions requests the engine preempted to answer them
     * @param timesCapped times the cache was capped at its guarantee for missing a deadline
     * @param waits allocations served after a reclaim
     * @param waitP50Ms median of their refusal-to-answer time ({@code Allocation.reclaimWaitNanos})
     * @param waitP99Ms its 99th percentile
     * @param guaranteeBytes the cache's guaranteed share at the end of the run; -1 when not known
     */
    public record Reclaims(long asked, long blocksAsked, long preemptions, long timesCapped, long waits, double waitP50Ms,
            double waitP99Ms, long guaranteeBytes) {
    }

    /**
     * @param holdersPerPage requests holding a block in a page, over the pages held, mean over the steps
 * @param fill blocks held over the blocks of the pages they lie in, mean over the same steps
     * @param holdersAtReclaim the same, mean over the reclaims asked (0 without one)
     * @param pagesAsked pages the reclaims asked for
     * @param byTurnover pages that finishing requests gave back before the reclaims preempted
     * @param byPreempting pages that the reclaims' preemptions emptied
     * @param preempted requests preempted for reclaims
     */
    public record Placement(double holdersPerPage, double fill, double holdersAtReclaim, long pagesAsked, long byTurnover, long byPreempting,
            long preempted) {

        /** Requests preempted per page a preemption emptied; NaN when none was. */
        public double preemptedPerPage() {
            return byPreempting == 0 ? Double.NaN : (double) preempted / byPreempting;
        }
    }

    /**
     * @param prefillFirstTokens tokens prefilled for the first time
     * @param prefillAgainTokens tokens prefilled again, their KV thrown away by a preemption
     * @param satOutRequestSteps request-steps a running request sat out, its block refused
     * @param refusedSeconds time (sampled) a request of this model waited refused
     * @param heldSeconds time (sampled) ready requests were held out of admission by the engine's rules
     */
    public record Work(long prefillFirstTokens, long prefillAgainTokens, long satOutRequestSteps, double refusedSeconds, double heldSeconds) {
    }

    /**
     * One request of the trace as this run served it.
     *
     * @param id its id in the trace (the same request under every policy of a comparison)
     * @param arrivalMs when it arrived, ms from the start of the run
     * @param firstTokenMs when its first output token was decoded, ms from the start; -1 if it never was
     * @param promptTokens its prompt
     */
    public record Request(int id, long arrivalMs, long firstTokenMs, int promptTokens) {

        /** Arrival to first token, ms; -1 without a first token. */
        public long ttftMs() {
            return firstTokenMs < 0 ? -1 : firstTokenMs - arrivalMs;
        }

        /** Whether it had arrived and had no first token yet at {@code ms}. */
        boolean waitingAt(long ms) {
            return arrivalMs <= ms && (firstTokenMs < 0 || firstTokenMs > ms);
        }
    }
}
