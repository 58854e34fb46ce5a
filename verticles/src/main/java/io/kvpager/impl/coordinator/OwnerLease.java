package io.kvpager.impl.coordinator;

import io.kvpager.protocol.RankTarget;
import io.kvpager.protocol.WorkerProtocol;

import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * How long this coordinator incarnation knows, on its own clock, that every rank still keeps the
 * pool's group for it: the fence a coordinator checks before it hands out blocks, so that one
 * paused or cut off past the workers' lease grace never answers with blocks on pages the workers
 * have released.
 *
 * <p>A rank's successful answer to a request this owner sent at {@code t} (by
 * {@link System#nanoTime}, which keeps counting while the process is stopped) states the lease the
 * rank holds for the owner from the moment it answered ({@link WorkerProtocol#LEASE_MS}): the
 * rank releases the group no sooner than that, counted on its own clock. The answer came after
 * {@code t}, so the group is the owner's there until at least {@code t + lease}; the lease here
 * ends a margin before that ({@link #marginMs}), for the time between the check and the caller
 * reading the answer. An answer that states no lease comes from a rank that follows no cluster,
 * whose lease never ends. Confined to the coordinator's context.
 */
final class OwnerLease {

    /** The most the lease keeps back from the workers' stated lease. */
    static final long MARGIN_MS = 500;
    /**
     * The shortest lease (less its margin) that can fence anything: a shorter one ends within a
     * round trip or two of a loaded host, so no answer could ever come back while it lasts.
     */
    static final long MIN_FENCING_MS = 100;
    private static final long UNBOUNDED = Long.MAX_VALUE;

    private final List<RankTarget> ranks;
    /** Per rank, when ({@link System#nanoTime}) its confirmed lease ends here; absent: never confirmed. */
    private final Map<RankTarget, Long> ends = new HashMap<>();
    /** Per rank, the lease its last answer stated (-1: none, unbounded), for the renewal and messages. */
    private final Map<RankTarget, Long> stated = new HashMap<>();

    OwnerLease(List<RankTarget> ranks) {
        this.ranks = List.copyOf(ranks);
    }

    /** What is kept back from a stated lease: a quarter of it, at most {@link #MARGIN_MS}. */
    static long marginMs(long leaseMs) {
        return Math.min(MARGIN_MS, leaseMs / 4);
    }

    /**
     * {@code rank} answered a request of this owner sent at {@code sentAtNanos}, stating
     * {@code leaseMs} ({@code -1}: none, the rank's lease never ends). A later end replaces an
     * earlier one, never the other way round.
     */
    void confirmed(RankTarget rank, long sentAtNanos, long leaseMs) {
        stated.put(rank, leaseMs);
        long end = leaseMs < 0 ? UNBOUNDED : sentAtNanos + (leaseMs - marginMs(leaseMs)) * 1_000_000;
        Long before = ends.get(rank);
        if (before == null || before != UNBOUNDED && (end == UNBOUNDED || end - before > 0)) {
            ends.put(rank, end);
        }
    }

    /** Whether every rank's lease is confirmed and lasts past now. */
    boolean current() {
        return remainingNanos() > 0;
    }

    /**
     * How long the shortest rank's lease lasts from now, in ns: {@code Long.MAX_VALUE} when no rank's
     * lease ends, 0 or less when one has ended or was never confirmed.
     */
    long remainingNanos() {
        long now = System.nanoTime();
        long least = UNBOUNDED;
        for (RankTarget rank : ranks) {
            Long end = ends.get(rank);
            if (end == null) {
                return 0;
            }
            if (end != UNBOUNDED) {
                least = Math.min(least, end - now);
            }
        }
        return least;
    }

    /**
     * Whether the lease is worth renewing in the background now: it ends within half its length
     * (so an allocation still finds it current), and its length leaves room for a renewal at all.
     */
    boolean dueForRenewal() {
        long statedMs = statedMs();
        if (statedMs < 0 || !fences()) {
            return false;
        }
        long length = statedMs - marginMs(statedMs);
        return remainingNanos() < length * 1_000_000 / 2;
    }

    /**
     * Whether the lease the ranks stated is long enough to fence ({@link #MIN_FENCING_MS}); true
     * before any rank stated one. Below it an owner check that every rank answered yes is all the
     * proof there is.
     */
    boolean fences() {
        long statedMs = statedMs();
        return statedMs < 0 || statedMs - marginMs(statedMs) >= MIN_FENCING_MS;
    }

    /** The shortest lease the ranks' last answers stated, or -1 when none stated one. */
    long statedMs() {
        long least = -1;
        for (long ms : stated.values()) {
            if (ms >= 0 && (least < 0 || ms < least)) {
                least = ms;
            }
        }
        return least;
    }
}
