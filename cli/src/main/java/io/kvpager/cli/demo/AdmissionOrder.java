package io.kvpager.cli.demo;

import java.util.Comparator;

/**
 * The order in which the demo's engine admits its waiting requests: the one due soonest first.
 * A request that has no first token yet is due when its time to first token would pass the
 * target (its arrival plus the TTFT target). One preempted after it had decoded is due when its
 * time per output token so far would reach the target (its first token plus the tokens it decoded
 * times the TPOT target): it decoded ahead of that target, and can wait until then and still meet
 * it. Equal dues go by arrival.
 *
 * <p>Before, the queue was in arrival order, so a preempted request went back ahead of every
 * request that arrived after it. Under arbitration a reclaim preempts several requests of the
 * borrower at once, and the requests that had come in meanwhile then waited behind their
 * recomputation and missed the time-to-first-token target, while the preempted ones had seconds
 * of slack on theirs (docs/sharing.md, "The admission order"). The engine still knows no output
 * length ahead: the due dates use what has happened so far only.
 */
final class AdmissionOrder implements Comparator<ServedRequest> {

    private final long ttftMs;
    private final long tpotMs;

    AdmissionOrder(ServiceTargets targets) {
        this.ttftMs = targets.ttft().toMillis();
        this.tpotMs = targets.tpot().toMillis();
    }

    /** When {@code request} is due, ms on the run's clock: see the class comment. */
    long due(ServedRequest request) {
        if (request.firstTokenMs < 0) {
            return request.trace.arrivalMs() + ttftMs;
        }
        return request.firstTokenMs + request.generated() * tpotMs;
    }

    @Override
    public int compare(ServedRequest a, ServedRequest b) {
        int byDue = Long.compare(due(a), due(b));
        return byDue != 0 ? byDue : ServedRequest.BY_ARRIVAL.compare(a, b);
    }
}
