package io.kvpager.core;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.kvpager.Allocation;
import io.kvpager.LimitResult;
import io.kvpager.LimitResult.Outcome;
import io.kvpager.MissReason;
import java.util.ArrayList;
import java.util.BitSet;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.function.Predicate;

/**
 * Drives a {@link PageLedger} as an engine would and checks it against what the engine knows: the
 * blocks it holds, the fences it opened, the limits it set, and what the mapper says is mapped.
 * After every step the ledger's own invariants must hold, no block is held twice, every held
 * block lies in a page the mapper has mapped, the ledger's mapped pages are exactly the mapper's,
 * and no page was unmapped while a fence open when its blocks were freed was still open.
 */
final class LedgerModel {

    /** What the mapper under the ledger knows about a page. */
    interface MapperView {
        /** Mapped for sure (not lost). */
        boolean mapped(int page);

        /** In an unknown state after a failed undo. */
        boolean lost(int page);

        /** Page ids of every unmap call so far, in order. */
        List<int[]> unmapCalls();
    }

    final PageLedger ledger;
    private final MapperView mapper;
    private final Predicate<Throwable> expectedFailure;
    private final int totalBlocks;
    private final BitSet held = new BitSet();
    private final BitSet freedOnce = new BitSet();
    private final List<int[]> allocations = new ArrayList<>();
    private final List<CompletableFuture<Allocation>> pendingAllocs = new ArrayList<>();
    private final List<CompletableFuture<Integer>> pendingPages = new ArrayList<>();
    private final List<Long> openFences = new ArrayList<>();
    /** Per page, the fences that were open when the engine freed one of its blocks. */
    private final List<Set<Long>> fencesAtFree = new ArrayList<>();
    private int unmapCallsSeen;
    private long limitRevision = -1;
    private long limitBytes = Long.MAX_VALUE;

    LedgerModel(PageLedger ledger, MapperView mapper, Predicate<Throwable> expectedFailure) {
        this.ledger = ledger;
        this.mapper = mapper;
        this.expectedFailure = expectedFailure;
        this.totalBlocks = ledger.geometry().totalBlocks();
        for (int page = 0; page < ledger.geometry().pages(); page++) {
            fencesAtFree.add(new HashSet<>());
        }
    }

    void alloc(int n, boolean mapperAnswersAtOnce) {
        int count = Math.min(n, totalBlocks);
        int available = ledger.availableBlocks();
        CompletableFuture<Allocation> answer = ledger.alloc(count).toCompletableFuture();
        if (count > available) {
            assertThat(answer).as("alloc(%d) with %d available", count, available).isDone();
            assertThat(answer.join().missReason()).as("alloc(%d) with %d available", count, available)
                    .isIn(MissReason.LIMIT, MissReason.NO_PAGES);
        } else if (mapperAnswersAtOnce) {
            assertThat(answer).isDone();
            assertThat(answer.join().isMiss()).as("alloc(%d) with %d available: %s", count, available, answer.join()).isFalse();
        }
        pendingAllocs.add(answer);
    }

    /**
     * An allocation near a block the engine holds (any block then, when it holds none): with the
     * same misses as {@link #alloc}; the first blocks lie in the held block's page while it has
     * room. Near a block not held, it is refused without changing anything.
     */
    void allocNear(int n, int pick, boolean mapperAnswersAtOnce) {
        int count = Math.min(n, totalBlocks);
        if (held.isEmpty() || Math.floorMod(pick, 5) == 0) {
            int[] other = notHeld(pick, null);
            if (other == null) {
                return;
            }
            String before = ledger.describeState();
            LedgerStats stats = ledger.stats();
            assertThatThrownBy(() -> ledger.alloc(count, other[0])).isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining("cannot allocate near block " + other[0]);
            assertThat(ledger.describeState()).isEqualTo(before);
            assertThat(ledger.stats()).isEqualTo(stats);
            return;
        }
        int near = nth(held, pick);
        int page = ledger.geometry().pageOf(near);
        int freeHere = ledger.freeBlocksIn(page);
        int available = ledger.availableBlocks();
        CompletableFuture<Allocation> answer = ledger.alloc(count, near).toCompletableFuture();
        if (count > available) {
            assertThat(answer).isDone();
            assertThat(answer.join().missReason()).isIn(MissReason.LIMIT, MissReason.NO_PAGES);
        } else if (mapperAnswersAtOnce) {
            assertThat(answer).isDone();
            assertThat(answer.join().isMiss()).as("alloc(%d, %d) with %d available: %s", count, near, available, answer.join()).isFalse();
        }
        if (answer.isDone() && !answer.join().isMiss()) {
            int[] got = answer.join().blocks();
            for (int i = 0; i < Math.min(count, freeHere); i++) {
                assertThat(ledger.geometry().pageOf(got[i])).as("block %d of alloc(%d) near %d", i, count, near).isEqualTo(page);
            }
        }
        pendingAllocs.add(answer);
    }

    void free(int which, int count) {
        if (allocations.isEmpty()) {
            return;
        }
        int index = Math.floorMod(which, allocations.size());
        int[] blocks = allocations.get(index);
        int k = 1 + Math.floorMod(count, blocks.length);
        int[] freed = java.util.Arrays.copyOf(blocks, k);
        int releasable = ledger.free(freed);
        BitSet reclaimed = new BitSet();
        for (int block : freed) {
            int page = ledger.geometry().pageOf(block);
            if (ledger.pageState(page) == PageState.RECLAIMED) {
                reclaimed.set(page);
            }
        }
        // what free says it left to release at once: the pages it emptied into the reclaimed list, when no fence holds them
        assertThat(releasable).as("pages free(%s) left releasable, fences %s", java.util.Arrays.toString(freed), openFences)
                .isEqualTo(openFences.isEmpty() ? reclaimed.cardinality() : 0);
        for (int block : freed) {
            held.clear(block);
            freedOnce.set(block);
            fencesAtFree.get(ledger.geometry().pageOf(block)).addAll(openFences);
        }
        if (k == blocks.length) {
            allocations.remove(index);
        } else {
            allocations.set(index, java.util.Arrays.copyOfRange(blocks, k, blocks.length));
        }
    }

    /** A free the ledger must refuse without changing anything. */
    void badFree(int kind, int pick) {
        int[] blocks = switch (Math.floorMod(kind, 5)) {
            case 0 -> new int[] {totalBlocks + Math.floorMod(pick, 3)};
            case 1 -> new int[] {-1 - Math.floorMod(pick, 3)};
            case 2 -> notHeld(pick, freedOnce);
            case 3 -> notHeld(pick, null);
            default -> {
                if (held.isEmpty()) {
                    yield new int[] {-1};
                }
                int block = nth(held, pick);
                yield new int[] {block, block};
            }
        };
        if (blocks == null) {
            return;
        }
        if (!held.isEmpty() && Math.floorMod(pick, 2) == 0) {
            // A held block first: it must not be freed either.
            int[] withHeld = new int[blocks.length + 1];
            withHeld[0] = nth(held, pick / 2);
            System.arraycopy(blocks, 0, withHeld, 1, blocks.length);
            blocks = withHeld;
        }
        String before = ledger.describeState();
        LedgerStats stats = ledger.stats();
        int[] refused = blocks;
        assertThatThrownBy(() -> ledger.free(refused)).isInstanceOf(IllegalArgumentException.class);
        assertThat(ledger.describeState()).isEqualTo(before);
        assertThat(ledger.stats()).isEqualTo(stats);
    }

    /** A block not held by the engine: one of {@code among} (or any) that is not held now. */
    private int[] notHeld(int pick, BitSet among) {
        BitSet candidates = among == null ? new BitSet() : (BitSet) among.clone();
        if (among == null) {
            candidates.set(0, totalBlocks);
        }
        candidates.andNot(held);
        return candidates.isEmpty() ? null : new int[] {nth(candidates, pick)};
    }

    private static int nth(BitSet set, int pick) {
        int skip = Math.floorMod(pick, set.cardinality());
        int block = set.nextSetBit(0);
        for (int i = 0; i < skip; i++) {
            block = set.nextSetBit(block + 1);
        }
        return block;
    }

    void setLimit(int pages, int revisionStep) {
        long bytes = pages * ledger.geometry().bytesPerPageId() + Math.floorMod(revisionStep, 2);
        long revision = Math.max(0, limitRevision + revisionStep);
        LimitResult result = ledger.setLimit(bytes, revision);
        Outcome expected;
        if (revision < limitRevision) {
            expected = Outcome.STALE;
        } else if (revision == limitRevision && bytes != limitBytes) {
            expected = Outcome.CONFLICT;
        } else {
            expected = null;
            limitRevision = revision;
            limitBytes = bytes;
        }
        LedgerStats stats = ledger.stats();
        if (expected != null) {
            assertThat(result.outcome()).isEqualTo(expected);
        } else if (result.outcome() == Outcome.DEFERRED) {
            assertThat(stats.inUsePages() + stats.mappingPages()).isGreaterThan(stats.limitPages());
        } else {
            assertThat(result.outcome()).isEqualTo(Outcome.APPLIED);
            assertThat(stats.inUsePages()).isLessThanOrEqualTo(stats.limitPages());
        }
        assertThat(result.revision()).isEqualTo(limitRevision);
        assertThat(result.limitBytes()).isEqualTo(limitBytes);
        assertThat(result.effectivePages()).isEqualTo(ledger.geometry().pagesWithin(limitBytes));
    }

    void fence() {
        openFences.add(ledger.fence());
    }

    void retire(int which) {
        if (openFences.isEmpty()) {
            assertThatThrownBy(() -> ledger.retire(which)).isInstanceOf(IllegalArgumentException.class);
            return;
        }
        long fence = openFences.remove(Math.floorMod(which, openFences.size()));
        ledger.retire(fence);
        assertThatThrownBy(() -> ledger.retire(fence)).isInstanceOf(IllegalArgumentException.class);
    }

    void refill() {
        pendingPages.add(ledger.refill().toCompletableFuture());
    }

    void releaseReclaimed() {
        pendingPages.add(ledger.releaseReclaimed().toCompletableFuture());
    }

    void trim() {
        pendingPages.add(ledger.trim().toCompletableFuture());
    }

    /** Takes in the answers that arrived, then checks everything. */
    void check() {
        for (var it = pendingAllocs.iterator(); it.hasNext(); ) {
            CompletableFuture<Allocation> answer = it.next();
            if (!answer.isDone()) {
                continue;
            }
            it.remove();
            assertThat(answer.isCompletedExceptionally()).as("an allocation never fails, it misses: %s", answer).isFalse();
            Allocation allocation = answer.join();
            if (allocation.isMiss()) {
                continue;
            }
            int[] blocks = allocation.blocks();
            for (int block : blocks) {
                assertThat(held.get(block)).as("block %d handed out twice", block).isFalse();
                held.set(block);
                int page = ledger.geometry().pageOf(block);
                assertThat(mapper.mapped(page)).as("block %d handed out in unmapped page %d", block, page).isTrue();
            }
            allocations.add(blocks);
        }
        for (var it = pendingPages.iterator(); it.hasNext(); ) {
            CompletableFuture<Integer> answer = it.next();
            if (answer.isDone()) {
                it.remove();
                Throwable failure = answer.handle((v, e) -> e).join();
                if (failure != null) {
                    Throwable cause = failure instanceof java.util.concurrent.CompletionException && failure.getCause() != null
                            ? failure.getCause() : failure;
                    assertThat(expectedFailure.test(cause)).as("unexpected failure %s", cause).isTrue();
                }
            }
        }
        List<int[]> unmaps = mapper.unmapCalls();
        for (; unmapCallsSeen < unmaps.size(); unmapCallsSeen++) {
            for (int page : unmaps.get(unmapCallsSeen)) {
                for (long fence : fencesAtFree.get(page)) {
                    assertThat(openFences).as("page %d unmapped while fence %d may read it", page, fence).doesNotContain(fence);
                }
            }
        }
        ledger.checkInvariants();
        LedgerStats stats = ledger.stats();
        assertThat(stats.blocksAllocated() - stats.blocksFreed()).isEqualTo(held.cardinality());
        assertThat(stats.usedBlocks()).isGreaterThanOrEqualTo(held.cardinality());
        if (pendingAllocs.isEmpty()) {
            assertThat(stats.usedBlocks()).isEqualTo(held.cardinality());
        }
        int mapped = 0;
        for (int page = 0; page < ledger.geometry().pages(); page++) {
            PageState state = ledger.pageState(page);
            boolean ledgerMapped = state == PageState.IN_USE || state == PageState.RESERVE
                    || state == PageState.RECLAIMED || state == PageState.UNMAPPING;
            assertThat(mapper.lost(page)).as("page %d is %s", page, state).isEqualTo(state == PageState.QUARANTINED);
            if (!mapper.lost(page)) {
                assertThat(mapper.mapped(page)).as("page %d is %s", page, state).isEqualTo(ledgerMapped);
            }
            mapped += ledgerMapped ? 1 : 0;
        }
        assertThat(stats.mappedPages()).isEqualTo(mapped);
        for (int block = held.nextSetBit(0); block >= 0; block = held.nextSetBit(block + 1)) {
            assertThat(ledger.pageState(ledger.geometry().pageOf(block))).isEqualTo(PageState.IN_USE);
        }
    }

    /** Everything freed and every fence retired: a trim must leave only quarantined pages. */
    void drain() {
        check();
        assertThat(pendingAllocs).as("answers outstanding").isEmpty();
        while (!allocations.isEmpty()) {
            free(0, -1);
        }
        while (!openFences.isEmpty()) {
            retire(0);
        }
        check();
        CompletableFuture<Integer> trim = ledger.trim().toCompletableFuture();
        pendingPages.add(trim);
        check();
        LedgerStats stats = ledger.stats();
        if (trim.isDone() && !trim.isCompletedExceptionally()) {
            assertThat(stats.usedBlocks()).isZero();
            assertThat(stats.mappedPages()).isZero();
            assertThat(stats.freePages() + stats.quarantinedPages()).isEqualTo(stats.totalPages());
        }
    }

    boolean allocsPending() {
        return !pendingAllocs.isEmpty();
    }
}
