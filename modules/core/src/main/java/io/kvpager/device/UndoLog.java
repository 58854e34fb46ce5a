package io.kvpager.device;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.List;
import java.util.TreeSet;

/**
 * The compensations for the device steps of one batch, so that a failure at page k can undo the
 * steps before it in reverse order. Steps are grouped by page: when a compensation fails, the
 * rest of that page's compensations are skipped (they depend on it: a handle whose unmap failed
 * must not be released) while the other pages are still undone, and the page is reported as left
 * in an unknown state.
 */
final class UndoLog {

    /** One compensation; it updates the bookkeeping itself once its device calls succeed. */
    @FunctionalInterface
    interface Step {
        void undo();
    }

    private record Entry(int page, String what, Step step) {
    }

    private final Deque<Entry> entries = new ArrayDeque<>();
    private int page = RankException.NO_PAGE;

    /** Later steps belong to {@code page} ({@link RankException#NO_PAGE} for whole-group steps). */
    void page(int page) {
        this.page = page;
    }

    /** Records how to undo a step that just succeeded; {@code what} names the compensation. */
    void push(String what, Step step) {
        entries.push(new Entry(page, what, step));
    }

    boolean isEmpty() {
        return entries.isEmpty();
    }

    /**
     * Runs every compensation, newest first, and forgets them.
     *
     * @return what could not be undone; empty when everything was
     */
    Outcome rollback() {
        List<String> problems = new ArrayList<>();
        TreeSet<Integer> unknownPages = new TreeSet<>();
        boolean groupSkipped = false;
        while (!entries.isEmpty()) {
            Entry entry = entries.pop();
            if (entry.page != RankException.NO_PAGE ? unknownPages.contains(entry.page) : groupSkipped) {
                continue;
            }
            try {
                entry.step.undo();
            } catch (RuntimeException e) {
                problems.add((entry.page == RankException.NO_PAGE ? "" : "page " + entry.page + ": ")
                        + entry.what + ": " + e.getMessage());
                if (entry.page == RankException.NO_PAGE) {
                    groupSkipped = true;
                } else {
                    unknownPages.add(entry.page);
                }
            }
        }
        return new Outcome(List.copyOf(problems), List.copyOf(unknownPages));
    }

    /**
     * What a rollback left undone.
     *
     * @param problems one line per compensation that failed
     * @param unknownPages pages whose mapping is not what it was before the batch
     */
    record Outcome(List<String> problems, List<Integer> unknownPages) {

        boolean clean() {
            return problems.isEmpty();
        }

        /** A note for the failure text, empty when the rollback was clean. */
        String note() {
            if (clean()) {
                return "";
            }
            return "rollback incomplete (" + String.join("; ", problems) + ")"
                    + (unknownPages.isEmpty() ? "" : ", pages not restored: " + unknownPages);
        }
    }
}
