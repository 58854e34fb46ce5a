package io.kvpager.device;

import java.util.Arrays;

/**
 * What backs each slot of one page id: a slot is one handle's place in the page (the one compound
 * slot of {@code PAGE_MAJOR}, or one per tensor of {@code PER_LAYER}). A slot holds a real
 * handle, the group's zero page, or nothing. Only pages that differ from the group's idle state
 * (every slot on the zero page, or every slot empty) have a {@code PageHandles}.
 */
final class PageHandles {

    private final long[] handles;
    private final boolean[] real;
    private final boolean[] zero;

    /** A page in the idle state: every slot on the zero page when {@code onZero}, else empty. */
    PageHandles(int slots, boolean onZero) {
        handles = new long[slots];
        real = new boolean[slots];
        zero = new boolean[slots];
        Arrays.fill(zero, onZero);
    }

    int slots() {
        return handles.length;
    }

    boolean real(int slot) {
        return real[slot];
    }

    long handle(int slot) {
        if (!real[slot]) {
            throw new IllegalStateException("slot " + slot + " holds no handle");
        }
        return handles[slot];
    }

    void setReal(int slot, long handle) {
        handles[slot] = handle;
        real[slot] = true;
    }

    void clearReal(int slot) {
        handles[slot] = 0;
        real[slot] = false;
    }

    boolean zero(int slot) {
        return zero[slot];
    }

    void setZero(int slot, boolean mapped) {
        zero[slot] = mapped;
    }

    /** Real handles in this page. */
    int realCount() {
        int count = 0;
        for (boolean r : real) {
            count += r ? 1 : 0;
        }
        return count;
    }

    /** Every slot holds a real handle: the page is mapped. */
    boolean mapped() {
        return realCount() == handles.length;
    }

    /** The page is back in the idle state and needs no record. */
    boolean idle(boolean onZero) {
        for (int s = 0; s < handles.length; s++) {
            if (real[s] || zero[s] != onZero) {
                return false;
            }
        }
        return true;
    }
}
