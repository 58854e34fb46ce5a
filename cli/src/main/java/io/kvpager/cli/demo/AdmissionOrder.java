package io.kvpager.cli.demo;

import java.util.Comparator;

/**
 * The order in which the demo's engine admits its waiting requests: the one due soonest first,
 * where a request is due at the latest admission that still keeps its target, counting the steps
 * its prefill takes ({@code ceil(context / chunk)} steps of the engine's step time).
 *
 * <ul>
 *   <li>A request that has no first token yet is due at its arrival plus the TTFT target, less its
 *       prefill steps.
 *   <li>One preempted after it had decoded is due at its first token plus the TPOT target for each
 *       token it decoded but one, less the steps it takes to prefill its prompt and output again.
 *       Resumed then, it is back on the target's pace with about one token's target in hand (less
 *       a step): a due date that counted every decoded token and no prefill let a request wait
 *       until it had no slack left, and it missed the target by the prefill and the steps after
 *       (docs/sharing-rounds.md, "The admission order").
 *   <li>Equal dues go by arrival.
 * </ul>
 *
 * <p>Before, the queue was in arrival order, so a preempted request went back ahead of every
 * request that arrived after it. Under arbitration a reclaim preempts several requests of the
 * borrower at once, and the requests that had come in meanwhile then waited behind their
 * recomputation and missed the time-to-first-token target, while the preempted ones had seconds
 * of slack on theirs. The engine still knows no output length ahead: the due dates use what has
 * happened so far and the engine's nominal step only.
 */
final class AdmissionOrder implements Comparator<ServedRequest> {

    private final long ttftMs;
    private final long tpotMs;
    private final long stepMs;
    private final int prefillChunk;

    /**
     * @param stepMs the engine's step, ms (at least 1)
     * @param prefillChunk the prompt tokens one request prefills in one step (at least 1)
     */
    AdmissionOrder(ServiceTargets targets, long stepMs, int prefillChunk) {
        if (stepMs < 1 || prefillChunk < 1) {
            throw new IllegalArgumentException("the step and the prefill chunk are at least 1, got " + stepMs + " ms and "
                    + prefillChunk + " tokens");
        }
        this.ttftMs = targets.ttft().toMillis();
        this.tpotMs = targets.tpot().toMillis();
        this.stepMs = stepMs;
        this.prefillChunk = prefillChunk;
    }

    /** When {@code request} is due, ms on the run's clock: see the class comment. */
    long due(ServedRequest request) {
        long prefillMs = Math.ceilDiv(request.contextTokens(), prefillChunk) * stepMs;
        if (request.firstTokenMs < 0) {
            return request.trace.arrivalMs() + ttftMs - prefillMs;
        }
        return request.firstTokenMs + (request.generated() - 1L) * tpotMs - prefillMs;
    }

    @Override
    public int compare(ServedRequest a, ServedRequest b) {
        int byDue = Long.compare(due(a), due(b));
        return byDue != 0 ? byDue : ServedRequest.BY_ARRIVAL.compare(a, b);
    }
}
