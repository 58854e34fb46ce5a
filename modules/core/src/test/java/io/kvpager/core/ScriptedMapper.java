package io.kvpager.core;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.BitSet;
import java.util.Deque;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;

/**
 * A {@link PageMapper} for ledger tests: it remembers which pages are mapped, refuses (with an
 * {@link AssertionError}, which the ledger does not swallow) to map a mapped page or unmap an
 * unmapped one, answers at once or holds its answers until the test releases them, and fails
 * the calls a test scripts.
 */
final class ScriptedMapper implements PageMapper {

    /** What the next call of a kind does. */
    sealed interface Outcome {
        Outcome SUCCEED = new Succeed();
    }

    record Succeed() implements Outcome {}

    /** Fail the stage with this error; the batch is undone, except quarantined pages. */
    record Fail(RuntimeException error) implements Outcome {}

    /** Fail the stage, quarantining the first page of whatever batch it fails. */
    record FailLosingFirst() implements Outcome {}

    /** Throw this error from the call itself. */
    record Throw(RuntimeException error) implements Outcome {}

    /** One call whose answer is held. */
    record Held(boolean map, int[] pages, Outcome outcome, CompletableFuture<Void> stage) {}

    final BitSet mapped = new BitSet();
    /** Pages a failure left in an unknown state: mapped, as far as this mapper knows. */
    final BitSet lost = new BitSet();
    final List<int[]> mapCalls = new ArrayList<>();
    final List<int[]> unmapCalls = new ArrayList<>();
    private final Deque<Outcome> nextMaps = new ArrayDeque<>();
    private final Deque<Outcome> nextUnmaps = new ArrayDeque<>();
    private final List<Held> held = new ArrayList<>();
    boolean holding;

    void nextMap(Outcome outcome) {
        nextMaps.add(outcome);
    }

    void nextUnmap(Outcome outcome) {
        nextUnmaps.add(outcome);
    }

    /** A sweep released {@code pages} on every rank: they are unmapped, and no longer lost. */
    void released(int[] pages) {
        for (int page : pages) {
            lost.clear(page);
            mapped.clear(page);
        }
    }

    List<Held> held() {
        return held;
    }

    /** Whether calls may answer with anything but success or not at once. */
    boolean scripted() {
        return holding || !nextMaps.isEmpty();
    }

    void forgetScripts() {
        nextMaps.clear();
        nextUnmaps.clear();
    }

    @Override
    public CompletionStage<Void> map(int[] pages) {
        return call(true, pages, nextMaps.isEmpty() ? Outcome.SUCCEED : nextMaps.poll());
    }

    @Override
    public CompletionStage<Void> unmap(int[] pages) {
        return call(false, pages, nextUnmaps.isEmpty() ? Outcome.SUCCEED : nextUnmaps.poll());
    }

    private CompletionStage<Void> call(boolean map, int[] pages, Outcome outcome) {
        (map ? mapCalls : unmapCalls).add(pages.clone());
        for (int page : pages) {
            if (lost.get(page)) {
                throw new AssertionError("page " + page + " was quarantined but is " + (map ? "mapped" : "unmapped") + " again");
            }
            if (mapped.get(page) == map) {
                throw new AssertionError("page " + page + " is " + (map ? "mapped already" : "not mapped") + ": "
                        + Arrays.toString(pages));
            }
        }
        if (outcome instanceof Throw t) {
            throw t.error();
        }
        CompletableFuture<Void> stage = new CompletableFuture<>();
        if (holding) {
            held.add(new Held(map, pages.clone(), outcome, stage));
        } else {
            answer(map, pages, outcome, stage);
        }
        return stage;
    }

    /** Answers the held call at {@code index}. */
    void release(int index) {
        Held call = held.remove(index);
        answer(call.map(), call.pages(), call.outcome(), call.stage());
    }

    void releaseAll() {
        while (!held.isEmpty()) {
            release(0);
        }
    }

    private void answer(boolean map, int[] pages, Outcome outcome, CompletableFuture<Void> stage) {
        if (outcome instanceof FailLosingFirst) {
            outcome = new Fail(new PageMapFailure(io.kvpager.MissReason.MAP_FAILED,
                    "page " + pages[0] + ": could not undo " + (map ? "map" : "unmap"), new int[] {pages[0]}, null));
        }
        if (outcome instanceof Fail f) {
            if (f.error() instanceof PageMapFailure failure) {
                for (int page : failure.quarantined()) {
                    if (contains(pages, page)) {
                        lost.set(page);
                        mapped.set(page);
                    }
                }
            }
            stage.completeExceptionally(f.error());
            return;
        }
        for (int page : pages) {
            mapped.set(page, map);
        }
        stage.complete(null);
    }

    private static boolean contains(int[] pages, int page) {
        for (int p : pages) {
            if (p == page) {
                return true;
            }
        }
        return false;
    }

    /** Pages mapped and not lost: what the ledger must count as mapped. */
    BitSet mappedAndKnown() {
        BitSet known = (BitSet) mapped.clone();
        known.andNot(lost);
        return known;
    }
}
