package io.kvpager.core;

import static io.kvpager.core.Ledgers.blocks;
import static io.kvpager.core.Ledgers.now;
import static io.kvpager.core.Ledgers.range;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;

class PageLedgerFenceTest {

    private final ScriptedMapper mapper = new ScriptedMapper();
    private final PageLedger ledger = new PageLedger(TestPools.geometry(4, 4), mapper, ReserveMarks.none());

    @Test
    void fencesAreNumberedFromOneAndRetiredOnce() {
        assertThat(ledger.fence()).isEqualTo(1);
        assertThat(ledger.fence()).isEqualTo(2);
        assertThat(ledger.stats().openFences()).isEqualTo(2);
        ledger.retire(2);
        assertThatThrownBy(() -> ledger.retire(2)).isInstanceOf(IllegalArgumentException.class)
                .hasMessage("fence 2 is already retired");
        assertThatThrownBy(() -> ledger.retire(3)).isInstanceOf(IllegalArgumentException.class)
                .hasMessage("fence 3 was never opened; the last one opened is 2");
        assertThatThrownBy(() -> ledger.retire(0)).isInstanceOf(IllegalArgumentException.class);
        assertThat(ledger.stats().openFences()).isEqualTo(1);
        ledger.retire(1);
        assertThat(ledger.fence()).isEqualTo(3);
    }

    @Test
    void aPageEmptiedUnderAnOpenFenceStaysMappedUntilItRetires() {
        int[] held = blocks(ledger, 4);
        long fence = ledger.fence();
        ledger.free(held);
        assertThat(ledger.pageState(0)).isEqualTo(PageState.RECLAIMED);
        assertThat(now(ledger.releaseReclaimed())).isZero();
        assertThat(now(ledger.trim())).isZero();
        assertThat(mapper.unmapCalls).isEmpty();
        ledger.retire(fence);
        assertThat(now(ledger.releaseReclaimed())).isEqualTo(1);
        assertThat(ledger.pageState(0)).isEqualTo(PageState.FREE);
    }

    @Test
    void aFencedPageMayBeHandedOutAgainMeanwhile() {
        int[] held = blocks(ledger, 4);
        long fence = ledger.fence();
        ledger.free(held);
        assertThat(blocks(ledger, 4)).containsExactlyInAnyOrder(held);
        assertThat(mapper.mapCalls).hasSize(1);
        ledger.free(held);
        ledger.retire(fence);
        assertThat(now(ledger.releaseReclaimed())).isEqualTo(1);
    }

    @Test
    void aPageIsTaggedWithTheNewestOpenFenceAndWaitsForEveryFenceUpToIt() {
        blocks(ledger, 12);
        long first = ledger.fence();
        long second = ledger.fence();
        ledger.free(range(0, 4)); // tagged with the second
        ledger.retire(second);
        assertThat(now(ledger.releaseReclaimed())).as("the first fence still reads it").isZero();
        ledger.retire(first);
        assertThat(now(ledger.releaseReclaimed())).isEqualTo(1);
    }

    @Test
    void aFenceOpenedAfterAPageWasEmptiedDoesNotHoldItBack() {
        blocks(ledger, 8);
        long early = ledger.fence();
        ledger.free(range(0, 4)); // tagged with the early fence
        ledger.retire(early);
        long late = ledger.fence();
        ledger.free(range(4, 8)); // tagged with the late fence
        assertThat(now(ledger.releaseReclaimed())).isEqualTo(1);
        assertThat(ledger.pageState(0)).isEqualTo(PageState.FREE);
        assertThat(ledger.pageState(1)).isEqualTo(PageState.RECLAIMED);
        ledger.retire(late);
        assertThat(now(ledger.releaseReclaimed())).isEqualTo(1);
    }

    @Test
    void blocksFreedUnderAFenceHoldTheirPageEvenIfItEmptiesLater() {
        blocks(ledger, 4);
        long fence = ledger.fence();
        ledger.free(range(0, 2)); // a batch under the fence may still read blocks 0 and 1
        long newer = ledger.fence();
        ledger.retire(newer);
        ledger.free(range(2, 4));
        assertThat(now(ledger.releaseReclaimed())).isZero();
        ledger.retire(fence);
        assertThat(now(ledger.releaseReclaimed())).isEqualTo(1);
    }
}
