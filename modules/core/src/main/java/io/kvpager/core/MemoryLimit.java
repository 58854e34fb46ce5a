package io.kvpager.core;

import io.kvpager.Geometry;
import io.kvpager.LimitResult;

/**
 * A pool's memory limit with its revision. Whoever changes limits (an operator, the GPU broker)
 * numbers each change, so that a late or repeated message can never undo a newer one: an older
 * revision is stale, the same revision with other bytes a conflict, the same revision with the
 * same bytes a harmless repeat.
 *
 * <p>The limit counts whole page ids per rank ({@link Geometry#pagesWithin}); until the first
 * change it is every virtual page of the pool.
 */
final class MemoryLimit {

    /** The revision in force before any change: every real revision is newer. */
    static final long NO_REVISION = -1;

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
     * @throws IllegalArgumentException for negative bytes or revision
     */
    LimitResult.Outcome judge(long newBytes, long newRevision) {
        if (newBytes < 0) {
            throw new IllegalArgumentException("a memory limit cannot be negative: " + newBytes + " bytes");
        }
        if (newRevision < 0) {
            throw new IllegalArgumentException("a limit revision cannot be negative: " + newRevision);
        }
        if (newRevision < revision) {
            return LimitResult.Outcome.STALE;
        }
        if (newRevision == revision) {
            return newBytes == bytes ? LimitResult.Outcome.APPLIED : LimitResult.Outcome.CONFLICT;
        }
        return null;
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
