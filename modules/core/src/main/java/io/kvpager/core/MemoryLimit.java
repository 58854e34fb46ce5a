package io.kvpager.core;

import io.kvpager.Geometry;
import io.kvpager.LimitResult;

/**
 * A pool's memory limit with its revision. Whoever changes limits (an operator, the GPU broker)
 * numbers each change, so that a late or repeated message can never undo a newer one: an older
 * revision is stale, the same revision with other bytes a conflict, the same revision with the
 * same bytes a harmless repeat.
 *
 * <p>No single change can lock the limit: a caller's revision is at most {@link #MAX_REVISION}
 * (2^62), and a change without a revision of its own ({@link #next()}) takes the one in force plus
 * one, which is newer than anything in force. From 2^62 it takes 2^62 more such changes to run
 * out of revisions; the one that would overflow is refused.
 *
 * <p>The limit counts whole page ids per rank ({@link Geometry#pagesWithin}); until the first
 * change it is every virtual page of the pool.
 */
final class MemoryLimit {

    /** The revision in force before any change: every real revision is newer. */
    static final long NO_REVISION = -1;
    /** The highest revision a caller may give: far enough below {@link Long#MAX_VALUE} that the next ones never run out. */
    static final long MAX_REVISION = 1L << 62;

    private final Geometry geometry;
    private long bytes = Long.MAX_VALUE;
    private long revision = NO_REVISION;
    private int pages;

    MemoryLimit(Geometry geometry) {
        this.geometry = geometry;
        this.pages = geometry.pages();
    }

    /**
     * Decides on a change without making it: {@code null} when it is to be applied, else the
     * outcome ({@link LimitResult.Outcome#STALE} or {@link LimitResult.Outcome#CONFLICT}), or
     * {@link LimitResult.Outcome#APPLIED} for a repeat of the change in force.
     *
     * @throws IllegalArgumentException for negative bytes, or a revision below 0 or above {@link #MAX_REVISION}
     */
    LimitResult.Outcome judge(long newBytes, long newRevision) {
        checkBytes(newBytes);
        if (newRevision < 0) {
            throw new IllegalArgumentException("a limit revision cannot be negative: " + newRevision);
        }
        if (newRevision > MAX_REVISION) {
            throw new IllegalArgumentException("a limit revision is at most " + MAX_REVISION + " (2^62), got " + newRevision
                    + "; the revision in force is " + revision + ", and a change without a revision takes the next one");
        }
        if (newRevision < revision) {
            return LimitResult.Outcome.STALE;
        }
        if (newRevision == revision) {
            return newBytes == bytes ? LimitResult.Outcome.APPLIED : LimitResult.Outcome.CONFLICT;
        }
        return null;
    }

    /**
     * The revision a change without one of its own takes: the one in force plus one.
     *
     * @throws IllegalStateException when the revision in force is {@link Long#MAX_VALUE}
     */
    long next() {
        if (revision == Long.MAX_VALUE) {
            throw new IllegalStateException("the limit revision in force is " + Long.MAX_VALUE + ": no next revision exists");
        }
        return revision + 1;
    }

    static void checkBytes(long bytes) {
        if (bytes < 0) {
            throw new IllegalArgumentException("a memory limit cannot be negative: " + bytes + " bytes");
        }
    }

    void apply(long newBytes, long newRevision) {
        pages = geometry.pagesWithin(newBytes);
        bytes = newBytes;
        revision = newRevision;
    }

    long bytes() {
        return bytes;
    }

    long revision() {
        return revision;
    }

    /** The limit in whole page ids. */
    int pages() {
        return pages;
    }

    /** Whether a limit below the pool's virtual size was ever set. */
    boolean binds() {
        return pages < geometry.pages();
    }
}
