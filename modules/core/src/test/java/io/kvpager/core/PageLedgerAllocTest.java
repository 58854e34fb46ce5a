package io.kvpager.core;

import static io.kvpager.core.Ledgers.blocks;
import static io.kvpager.core.Ledgers.miss;
import static io.kvpager.core.Ledgers.now;
import static io.kvpager.core.Ledgers.range;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.kvpager.Allocation;
import io.kvpager.Geometry;
import io.kvpager.Layout;
import io.kvpager.MissReason;
import java.util.Arrays;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.Test;

class PageLedgerAllocTest {

    private final ScriptedMapper mapper = new ScriptedMapper();

    private PageLedger ledger(int pages, int blocksPerPage, ReserveMarks marks) {
        return new PageLedger(TestPools.geometry(pages, blocksPerPage), mapper, marks);
    }

    @Test
    void anAllocationThatNeedsNoMapIsCompleteWhenReturnedAndCallsNoMapper() {
        PageLedger ledger = ledger(4, 8, ReserveMarks.none());
        assertThat(blocks(ledger, 3)).containsExactly(0, 1, 2);
        assertThat(mapper.mapCalls).hasSize(1);
        assertThat(mapper.mapCalls.getFirst()).containsExactly(0);
        CompletableFuture<Allocation> second = ledger.alloc(5).toCompletableFuture();
        assertThat(second).isDone();
        assertThat(second.join().blocks()).containsExactly(3, 4, 5, 6, 7);
        assertThat(mapper.mapCalls).hasSize(1);
        assertThat(ledger.stats().allocs()).isEqualTo(2);
        assertThat(ledger.stats().blocksAllocated()).isEqualTo(8);
    }

    @Test
    void newPagesForOneAllocationAreMappedInOneBatch() {
        PageLedger ledger = ledger(8, 4, ReserveMarks.none());
        assertThat(blocks(ledger, 10)).containsExactly(range(0, 10));
        assertThat(mapper.mapCalls).hasSize(1);
        assertThat(mapper.mapCalls.getFirst()).containsExactly(0, 1, 2);
        assertThat(ledger.stats().maps()).isEqualTo(3);
        assertThat(ledger.stats().mapCalls()).isEqualTo(1);
    }

    @Test
    void partlyUsedPagesServeFirstBestFit() {
        PageLedger ledger = ledger(4, 8, ReserveMarks.none());
        blocks(ledger, 24);
        ledger.free(range(0, 5));   // page 0: 5 free
        ledger.free(range(8, 10));  // page 1: 2 free
        ledger.free(range(16, 19)); // page 2: 3 free
        assertThat(Arrays.stream(blocks(ledger, 2)).map(b -> b / 8)).containsOnly(1);
        assertThat(Arrays.stream(blocks(ledger, 3)).map(b -> b / 8)).containsOnly(2);
        // 6 do not fit into page 0's 5: a page must be mapped either way, and it holds them all, so that
        // they lie in one page instead of two; page 0 keeps its 5 for smaller allocations
        int[] spill = blocks(ledger, 6);
        assertThat(Arrays.stream(spill).map(b -> b / 8)).containsOnly(3);
        assertThat(mapper.mapCalls).hasSize(2);
        assertThat(Arrays.stream(blocks(ledger, 5)).map(b -> b / 8)).containsOnly(0);
        assertThat(mapper.mapCalls).hasSize(2);
    }

    @Test
    void anAllocationLargerThanTheNewPagesItNeedsTakesOnlyTheRestFromPartlyUsedPages() {
        PageLedger ledger = ledger(6, 8, ReserveMarks.none());
        blocks(ledger, 24);
        ledger.free(range(0, 3));   // page 0: 3 free
        ledger.free(range(8, 12));  // page 1: 4 free
        ledger.free(range(16, 18)); // page 2: 2 free
        int[] got = blocks(ledger, 12); // one new page either way: 8 there, the 4 left best fit into page 1
        assertThat(Arrays.stream(got).filter(b -> b / 8 == 3).count()).isEqualTo(8);
        assertThat(Arrays.stream(got).filter(b -> b / 8 == 1).count()).isEqualTo(4);
        assertThat(mapper.mapCalls).hasSize(2);
    }

    @Test
    void anAllocationNearABlockFillsThatBlocksPageFirst() {
        PageLedger ledger = ledger(4, 8, ReserveMarks.none());
        int[] a = blocks(ledger, 3);                 // page 0: 5 free
        int[] b = blocks(ledger, 5);                 // best fit: page 0 again, now full
        ledger.free(new int[] {a[1], a[2]});         // page 0: 2 free
        int[] c = blocks(ledger, 8 + 7);             // pages 1 and 2 (2 free in page 0 kept)
        assertThat(ledger.stats().usedBlocks()).isEqualTo(1 + 5 + 15);
        // best fit would take page 0's two free blocks (the fewest that hold 2); near c's last block, page 2
        int[] near = now(ledger.alloc(1, c[c.length - 1])).blocks();
        assertThat(near[0] / 8).isEqualTo(c[c.length - 1] / 8);
        int[] nearA = now(ledger.alloc(2, a[0])).blocks();
        assertThat(Arrays.stream(nearA).map(x -> x / 8)).containsOnly(0);
        assertThat(b).isNotEmpty();
        ledger.checkInvariants();
    }

    @Test
    void whatANearBlocksPageCannotHoldGoesToAReservePageOfItsOwnWhenThereIsOne() {
        PageLedger ledger = ledger(6, 8, ReserveMarks.fixed(0, 1));
        int[] a = blocks(ledger, 7);                 // page 0: 1 free
        int[] b = blocks(ledger, 6);                 // page 1: 2 free
        ledger.free(blocks(ledger, 8));              // page 2 into the reserve
        assertThat(ledger.pageState(2)).isEqualTo(PageState.RESERVE);
        // 1 in a's page, the other 2 in a reserve page: best fit would have put them into b's page
        int[] got = now(ledger.alloc(3, a[6])).blocks();
        assertThat(got[0] / 8).isEqualTo(0);
        assertThat(Arrays.stream(got, 1, 3).map(x -> x / 8)).containsOnly(2);
        assertThat(ledger.stats().maps()).isEqualTo(3);
        assertThat(ledger.pageState(b[0] / 8)).isEqualTo(PageState.IN_USE);
        ledger.checkInvariants();
    }

    @Test
    void anAllocationNearABlockNotHeldIsRefusedAndChangesNothing() {
        PageLedger ledger = ledger(4, 8, ReserveMarks.none());
        int[] a = blocks(ledger, 3);
        ledger.free(new int[] {a[2]});
        String before = ledger.describeState();
        assertThatThrownBy(() -> ledger.alloc(1, a[2])).isInstanceOf(IllegalArgumentException.class)
                .hasMessage("cannot allocate near block 2: it is not allocated");
        assertThatThrownBy(() -> ledger.alloc(1, 32)).isInstanceOf(IllegalArgumentException.class)
                .hasMessage("cannot allocate near block 32: it is out of range 0..31");
        assertThatThrownBy(() -> ledger.alloc(1, -1)).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("out of range");
        assertThatThrownBy(() -> ledger.alloc(0, a[0])).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("cannot allocate 0 blocks");
        assertThat(ledger.describeState()).isEqualTo(before);
        assertThat(ledger.stats().allocs()).isEqualTo(1);
    }

    @Test
    void anAllocationNearABlockStillMappingIsRefused() {
        PageLedger ledger = ledger(4, 8, ReserveMarks.none());
        blocks(ledger, 6);
        mapper.holding = true;
        CompletableFuture<Allocation> pending = ledger.alloc(10).toCompletableFuture(); // claims 6 and 7
        assertThat(pending).isNotDone();
        assertThatThrownBy(() -> ledger.alloc(1, 6)).isInstanceOf(IllegalArgumentException.class)
                .hasMessage("cannot allocate near block 6: it is not allocated");
        mapper.holding = false;
        mapper.releaseAll();
        assertThat(pending.join().blocks()).contains(6, 7);
        assertThat(now(ledger.alloc(1, 6)).isMiss()).isFalse();
        ledger.checkInvariants();
    }

    @Test
    void idlePagesServeBeforeNewMapsReclaimedOnesFirst() {
        PageLedger ledger = ledger(4, 8, ReserveMarks.fixed(0, 1));
        blocks(ledger, 16);
        ledger.free(range(0, 8));  // page 0 into the reserve (high mark 1)
        ledger.free(range(8, 16)); // page 1 reclaimed: the reserve is full
        assertThat(ledger.pageState(0)).isEqualTo(PageState.RESERVE);
        assertThat(ledger.pageState(1)).isEqualTo(PageState.RECLAIMED);
        assertThat(blocks(ledger, 8)).containsExactlyInAnyOrder(range(8, 16));
        assertThat(blocks(ledger, 8)).containsExactlyInAnyOrder(range(0, 8));
        assertThat(mapper.mapCalls).hasSize(1);
    }

    @Test
    void theTailOfAPageShorterThanABlockIsNeverHandedOut() {
        // 2 MiB pages of 700,000-byte blocks: 2 blocks per page and a 697,152-byte tail.
        Geometry geometry = new Geometry(1, 1, 700_000, TestPools.PAGE, 3, Layout.PAGE_MAJOR);
        PageLedger ledger = new PageLedger(geometry, mapper, ReserveMarks.none());
        int[] all = blocks(ledger, 6);
        assertThat(all).containsExactly(0, 1, 2, 3, 4, 5);
        for (int block : all) {
            long end = (block % geometry.blocksPerPage() + 1) * geometry.blockBytes();
            assertThat(end).as("block %d ends inside its page", block).isLessThanOrEqualTo(geometry.pageBytes());
            assertThat(mapper.mapped.get(geometry.pageOf(block))).isTrue();
        }
        assertThat(miss(ledger, 1).missReason()).isEqualTo(MissReason.NO_PAGES);
        assertThatThrownBy(() -> ledger.alloc(7)).isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void countsOutsideThePoolAreRefusedNotMissed() {
        PageLedger ledger = ledger(2, 4, ReserveMarks.none());
        for (int n : new int[] {0, -1, 9, Integer.MIN_VALUE}) {
            assertThatThrownBy(() -> ledger.alloc(n)).isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining("cannot allocate " + n + " blocks");
        }
        assertThat(ledger.stats().totalMisses()).isZero();
        assertThat(mapper.mapCalls).isEmpty();
    }

    @Test
    void exhaustedVirtualPagesAreAMiss() {
        PageLedger ledger = ledger(2, 4, ReserveMarks.none());
        blocks(ledger, 6);
        Allocation miss = miss(ledger, 3);
        assertThat(miss.missReason()).isEqualTo(MissReason.NO_PAGES);
        assertThat(miss.detail()).contains("0 of 2 virtual pages are free");
        assertThat(blocks(ledger, 2)).containsExactly(6, 7);
        assertThat(ledger.stats().missCount(MissReason.NO_PAGES)).isEqualTo(1);
    }

    @Test
    void availableBlocksIsExactlyWhatAnAllocationCanGet() {
        PageLedger ledger = ledger(6, 4, ReserveMarks.fixed(0, 2));
        blocks(ledger, 9);
        ledger.free(range(4, 8)); // page 1 into the reserve
        ledger.setLimit(TestPools.pagesOf(4), 1);
        // 3 free blocks in page 2, page 1 idle, 1 more page mappable under the limit of 4.
        assertThat(ledger.availableBlocks()).isEqualTo(3 + 2 * 4);
        miss(ledger, 12);
        blocks(ledger, 11);
        assertThat(ledger.availableBlocks()).isZero();
        assertThat(miss(ledger, 1).missReason()).isEqualTo(MissReason.LIMIT);
    }

    @Test
    void badFreesFailWholeAndChangeNothing() {
        PageLedger ledger = ledger(4, 4, ReserveMarks.fixed(0, 1));
        int[] held = blocks(ledger, 10);
        ledger.fence();
        ledger.free(new int[] {held[0], held[9]});
        String before = ledger.describeState();
        LedgerStats stats = ledger.stats();
        int[][] bad = {
            {held[1], 16},              // out of range
            {held[1], -3},              // negative
            {held[1], held[0]},         // freed already
            {held[1], 12},              // never handed out
            {held[1], held[2], held[1]} // listed twice in one call
        };
        String[] messages = {
            "block 16 is out of range 0..15", "block -3 is out of range 0..15", "block " + held[0] + " is not allocated",
            "block 12 is not allocated", "block " + held[1] + " is listed twice"
        };
        for (int i = 0; i < bad.length; i++) {
            int[] blocks = bad[i];
            assertThatThrownBy(() -> ledger.free(blocks)).isInstanceOf(IllegalArgumentException.class).hasMessage(messages[i]);
            assertThat(ledger.describeState()).isEqualTo(before);
            assertThat(ledger.stats()).isEqualTo(stats);
        }
        assertThatThrownBy(() -> ledger.free(null)).isInstanceOf(IllegalArgumentException.class);
        assertThat(ledger.describeState()).isEqualTo(before);
        ledger.checkInvariants();
        ledger.free(new int[] {held[1], held[2]});
        assertThat(ledger.stats().blocksFreed()).isEqualTo(4);
    }

    @Test
    void freeingNothingIsFine() {
        PageLedger ledger = ledger(2, 4, ReserveMarks.none());
        ledger.free(new int[0]);
        ledger.checkInvariants();
    }

    @Test
    void aPageEmptiedGoesToTheReserveUnderItsHighMarkElseToTheReclaimedList() {
        PageLedger ledger = ledger(4, 4, ReserveMarks.fixed(0, 1));
        blocks(ledger, 12);
        ledger.free(range(0, 4));
        ledger.free(range(4, 6));
        assertThat(ledger.pageState(0)).isEqualTo(PageState.RESERVE);
        assertThat(ledger.pageState(1)).isEqualTo(PageState.IN_USE);
        ledger.free(range(6, 8));
        assertThat(ledger.pageState(1)).isEqualTo(PageState.RECLAIMED);
        LedgerStats stats = ledger.stats();
        assertThat(stats.mappedPages()).isEqualTo(3);
        assertThat(stats.inUsePages()).isEqualTo(1);
        assertThat(stats.reservePages()).isEqualTo(1);
        assertThat(stats.reclaimedPages()).isEqualTo(1);
        assertThat(stats.freePages()).isEqualTo(1);
        assertThat(stats.usedBlocks()).isEqualTo(4);
        assertThat(now(ledger.releaseReclaimed())).isEqualTo(1);
        assertThat(mapper.unmapCalls.getFirst()).containsExactly(1);
        assertThat(ledger.pageState(1)).isEqualTo(PageState.FREE);
        assertThat(ledger.stats().unmaps()).isEqualTo(1);
        ledger.checkInvariants();
    }

    @Test
    void aLedgerNeedsItsParts() {
        Geometry geometry = TestPools.geometry(2, 4);
        assertThatThrownBy(() -> new PageLedger(null, mapper, ReserveMarks.none())).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> new PageLedger(geometry, null, ReserveMarks.none())).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> new PageLedger(geometry, mapper, null)).isInstanceOf(IllegalArgumentException.class);
        PageLedger ledger = new PageLedger(geometry, mapper, ReserveMarks.none());
        assertThatThrownBy(() -> ledger.pageState(2)).isInstanceOf(IllegalArgumentException.class);
    }
}
