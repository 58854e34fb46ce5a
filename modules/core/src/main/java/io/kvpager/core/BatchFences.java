package io.kvpager.core;

import java.util.Arrays;

/**
 * The batch fences of one pool. The engine opens a fence when a batch starts reading blocks and
 * retires it when the batch is done; a page emptied while fences are open is tagged with the
 * newest open fence and may be unmapped only once no open fence has an id at or below its tag,
 * because only those batches can still read its blocks.
 *
 * <p>Ids are 1, 2, ... in opening order; the open ones are kept sorted in an array (a handful at
 * a time), so the newest and the oldest open fence are read in constant time.
 */
final class BatchFences {

    private long[] open = new long[8];
    private int size;
    private long lastIssued;

    /** Opens a fence and returns its id. */
    long open() {
        if (size == open.length) {
            open = Arrays.copyOf(open, size * 2);
        }
        open[size++] = ++lastIssued;
        return lastIssued;
    }

    /** Retires an open fence; an id never issued or already retired fails and changes nothing. */
    void retire(long fence) {
        int index = Arrays.binarySearch(open, 0, size, fence);
        if (index < 0) {
            throw new IllegalArgumentException(fence <= 0 || fence > lastIssued
                    ? "fence " + fence + " was never opened; the last one opened is " + lastIssued
                    : "fence " + fence + " is already retired");
        }
        System.arraycopy(open, index + 1, open, index, size - index - 1);
        size--;
    }

    /** The tag for a page emptied now: the newest open fence, 0 when none is open. */
    long newestOpen() {
        return size == 0 ? 0 : open[size - 1];
    }

    /** Whether a page tagged {@code tag} may be unmapped: no open fence has an id at or below it. */
    boolean releasable(long tag) {
        return size == 0 || open[0] > tag;
    }

    boolean isOpen(long fence) {
        return Arrays.binarySearch(open, 0, size, fence) >= 0;
    }

    int openCount() {
        return size;
    }

    long lastIssued() {
        return lastIssued;
    }

    @Override
    public String toString() {
        return "open " + Arrays.toString(Arrays.copyOf(open, size)) + " of " + lastIssued;
    }
}
