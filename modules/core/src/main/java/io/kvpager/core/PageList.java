package io.kvpager.core;

import java.util.Arrays;

/**
 * A growable list of page ids used as a stack: the ledger's free pages, reserve and reclaimed
 * pages. Primitive ints, so that taking and returning pages on the allocation path allocates
 * nothing once the list has grown.
 */
final class PageList {

    private int[] pages;
    private int size;

    PageList(int capacity) {
        pages = new int[Math.max(4, capacity)];
    }

    int size() {
        return size;
    }

    boolean isEmpty() {
        return size == 0;
    }

    void push(int page) {
        if (size == pages.length) {
            pages = Arrays.copyOf(pages, pages.length * 2);
        }
        pages[size++] = page;
    }

    /** Removes and returns the page pushed last. */
    int pop() {
        if (size == 0) {
            throw new IllegalStateException("no page to take");
        }
        return pages[--size];
    }

    int get(int index) {
        return pages[index];
    }

    /** Removes the page at {@code index}, moving the last page into its slot. */
    void removeAt(int index) {
        pages[index] = pages[--size];
    }

    void clear() {
        size = 0;
    }

    int[] toArray() {
        return Arrays.copyOf(pages, size);
    }

    @Override
    public String toString() {
        return Arrays.toString(toArray());
    }
}
