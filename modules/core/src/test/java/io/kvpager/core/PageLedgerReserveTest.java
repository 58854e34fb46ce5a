package io.kvpager.core;

import static io.kvpager.core.Ledgers.blocks;
import static io.kvpager.core.Ledgers.now;
import static io.kvpager.core.TestPools.pagesOf;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.Test;

class PageLedgerReserveTest {

    private final ScriptedMapper mapper = new ScriptedMapper();

    private PageLedger ledger(int pages, ReserveMarks marks) {
        return new PageLedger(TestPools.geometry(pages, 4), mapper, marks);
    }

    @Test
    void marksMustBeOrdered() {
        assertThatThrownBy(() -> new ReserveMarks(-1, 2, false)).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("cannot be negative");
        assertThatThrownBy(() -> ReserveMarks.fixed(3, 2)).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("below the low mark");
        assertThat(ReserveMarks.adaptive(1, 8)).isEqualTo(new ReserveMarks(1, 8, true));
    }

    @Test
    void aRefillBringsTheReserveUpToItsHighMarkInOneBatchOnceItIsBelowItsLowMark() {
        PageLedger ledger = ledger(16, ReserveMarks.fixed(2, 4));
        assertThat(ledger.refillDemand()).isEqualTo(4);
        assertThat(now(ledger.refill())).isEqualTo(4);
        assertThat(mapper.mapCalls).hasSize(1);
        assertThat(mapper.mapCalls.getFirst()).containsExactly(0, 1, 2, 3);
        assertThat(ledger.stats().reservePages()).isEqualTo(4);
        assertThat(ledger.refillDemand()).isZero();
        blocks(ledger, 8); // two reserve pages, no map
        assertThat(mapper.mapCalls).hasSize(1);
        assertThat(ledger.refillDemand()).as("at the low mark").isZero();
        blocks(ledger, 4);
        assertThat(ledger.refillDemand()).isEqualTo(3);
        assertThat(now(ledger.refill())).isEqualTo(3);
        assertThat(now(ledger.refill())).isZero();
        assertThat(mapper.mapCalls).hasSize(2);
        ledger.checkInvariants();
    }

    @Test
    void aRefillInFlightCountsTowardsTheReserve() {
        PageLedger ledger = ledger(16, ReserveMarks.fixed(2, 4));
        mapper.holding = true;
        CompletableFuture<Integer> refill = ledger.refill().toCompletableFuture();
        assertThat(refill).isNotDone();
        assertThat(ledger.stats().mappingPages()).isEqualTo(4);
        assertThat(ledger.refillDemand()).isZero();
        assertThat(now(ledger.refill())).isZero();
        ledger.checkInvariants();
        mapper.releaseAll();
        assertThat(refill.join()).isEqualTo(4);
        assertThat(ledger.stats().reservePages()).isEqualTo(4);
        ledger.checkInvariants();
    }

    @Test
    void aRefillStaysWithinTheLimitAndTheFreePages() {
        PageLedger ledger = ledger(3, ReserveMarks.fixed(4, 8));
        assertThat(ledger.refillDemand()).isEqualTo(3);
        ledger.setLimit(pagesOf(2), 1);
        assertThat(ledger.refillDemand()).isEqualTo(2);
        blocks(ledger, 1);
        assertThat(ledger.refillDemand()).isEqualTo(1);
        assertThat(now(ledger.refill())).isEqualTo(1);
        assertThat(ledger.refillDemand()).isZero();
    }

    @Test
    void reservePagesAboveTheHighMarkAreReleased() {
        PageLedger ledger = ledger(8, ReserveMarks.fixed(0, 2));
        ledger.free(blocks(ledger, 20));
        assertThat(ledger.stats().reservePages()).isEqualTo(2);
        assertThat(ledger.stats().reclaimedPages()).isEqualTo(3);
        assertThat(now(ledger.releaseReclaimed())).isEqualTo(3);
        assertThat(ledger.stats().mappedPages()).isEqualTo(2);
        assertThat(now(ledger.releaseReclaimed())).isZero();
        ledger.checkInvariants();
    }

    @Test
    void trimUnmapsTheWholeIdleReserveInOneBatchButNotFencedPages() {
        PageLedger ledger = ledger(8, ReserveMarks.fixed(2, 4));
        now(ledger.refill());
        int[] held = blocks(ledger, 4);
        long fence = ledger.fence();
        ledger.free(held);
        assertThat(now(ledger.trim())).isEqualTo(3);
        assertThat(mapper.unmapCalls).hasSize(1);
        assertThat(ledger.stats().reservePages()).as("the fenced page").isEqualTo(1);
        ledger.retire(fence);
        assertThat(now(ledger.trim())).isEqualTo(1);
        assertThat(ledger.stats().mappedPages()).isZero();
        assertThat(now(ledger.trim())).isZero();
        assertThat(mapper.unmapCalls).hasSize(2);
    }

    @Test
    void adaptiveMarksFollowThePagesTakenPerRefillInterval() {
        PageLedger ledger = ledger(200, ReserveMarks.adaptive(1, 8));
        assertThat(ledger.stats().lowMark()).isEqualTo(1);
        assertThat(ledger.stats().highMark()).isEqualTo(2);
        for (int interval = 0; interval < 12; interval++) {
            blocks(ledger, 12); // three pages per interval
            now(ledger.refill());
            ledger.checkInvariants();
        }
        assertThat(ledger.stats().lowMark()).isEqualTo(3);
        assertThat(ledger.stats().highMark()).isEqualTo(6);
        assertThat(ledger.stats().reservePages()).isEqualTo(6);
        for (int interval = 0; interval < 12; interval++) {
            blocks(ledger, 40); // ten pages per interval: clamped to the ceiling
            now(ledger.refill());
        }
        assertThat(ledger.stats().lowMark()).isEqualTo(8);
        assertThat(ledger.stats().highMark()).isEqualTo(8);
        assertThat(ledger.stats().reservePages()).isEqualTo(8);
        for (int interval = 0; interval < 20; interval++) {
            now(ledger.refill()); // idle
        }
        assertThat(ledger.stats().lowMark()).isEqualTo(1);
        assertThat(ledger.stats().highMark()).isEqualTo(2);
        // An idle pool holds no more than its floor needs: the rest goes back.
        assertThat(ledger.stats().reservePages()).isEqualTo(2);
        assertThat(ledger.stats().reclaimedPages()).isEqualTo(6);
        assertThat(now(ledger.releaseReclaimed())).isEqualTo(6);
        ledger.checkInvariants();
    }

    @Test
    void fixedMarksIgnoreConsumption() {
        PageLedger ledger = ledger(64, ReserveMarks.fixed(1, 3));
        for (int interval = 0; interval < 5; interval++) {
            blocks(ledger, 40);
            now(ledger.refill());
        }
        assertThat(ledger.stats().lowMark()).isEqualTo(1);
        assertThat(ledger.stats().highMark()).isEqualTo(3);
    }
}
