package io.kvpager.core;

import static io.kvpager.core.Ledgers.blocks;
import static io.kvpager.core.Ledgers.miss;
import static io.kvpager.core.Ledgers.now;
import static io.kvpager.core.Ledgers.range;
import static io.kvpager.core.TestPools.pagesOf;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.kvpager.Allocation;
import io.kvpager.LimitResult;
import io.kvpager.LimitResult.Outcome;
import io.kvpager.MissReason;
import org.junit.jupiter.api.Test;

class PageLedgerLimitTest {

    private final ScriptedMapper mapper = new ScriptedMapper();
    private final PageLedger ledger = new PageLedger(TestPools.geometry(8, 4), mapper, ReserveMarks.fixed(0, 4));

    @Test
    void aPoolStartsUnlimited() {
        LedgerStats stats = ledger.stats();
        assertThat(stats.limitPages()).isEqualTo(8);
        assertThat(stats.limitRevision()).isEqualTo(-1);
        assertThat(ledger.availableBlocks()).isEqualTo(32);
        blocks(ledger, 32);
    }

    @Test
    void aLimitCountsWholePageIds() {
        LimitResult result = ledger.setLimit(pagesOf(3) + pagesOf(1) - 1, 1);
        assertThat(result).isEqualTo(new LimitResult(Outcome.APPLIED, 1, pagesOf(4) - 1, 3, 0));
        assertThat(ledger.stats().limitPages()).isEqualTo(3);
        assertThat(ledger.stats().limitRevision()).isEqualTo(1);
        blocks(ledger, 12);
        Allocation miss = miss(ledger, 1);
        assertThat(miss.missReason()).isEqualTo(MissReason.LIMIT);
        assertThat(miss.detail()).contains("the limit is 3 pages (revision 1)");
        assertThat(ledger.stats().missCount(MissReason.LIMIT)).isEqualTo(1);
    }

    @Test
    void aLimitOfZeroAllowsNothing() {
        assertThat(ledger.setLimit(0, 1).outcome()).isEqualTo(Outcome.APPLIED);
        assertThat(ledger.availableBlocks()).isZero();
        assertThat(miss(ledger, 1).missReason()).isEqualTo(MissReason.LIMIT);
        assertThat(ledger.refillDemand()).isZero();
    }

    @Test
    void revisionsDecideWhichChangeHolds() {
        ledger.setLimit(pagesOf(4), 5);
        assertThat(ledger.setLimit(pagesOf(6), 4)).isEqualTo(new LimitResult(Outcome.STALE, 5, pagesOf(4), 4, 0));
        assertThat(ledger.setLimit(pagesOf(6), 5)).isEqualTo(new LimitResult(Outcome.CONFLICT, 5, pagesOf(4), 4, 0));
        assertThat(ledger.setLimit(pagesOf(4), 5)).isEqualTo(new LimitResult(Outcome.APPLIED, 5, pagesOf(4), 4, 0));
        assertThat(ledger.setLimit(pagesOf(6), 6)).isEqualTo(new LimitResult(Outcome.APPLIED, 6, pagesOf(6), 6, 0));
        assertThat(ledger.stats().limitPages()).isEqualTo(6);
        // Revision 0 is a real revision: newer than none.
        PageLedger fresh = new PageLedger(TestPools.geometry(8, 4), mapper, ReserveMarks.none());
        assertThat(fresh.setLimit(pagesOf(2), 0).outcome()).isEqualTo(Outcome.APPLIED);
    }

    @Test
    void negativeBytesOrRevisionsAreRefusedAndChangeNothing() {
        ledger.setLimit(pagesOf(4), 2);
        String before = ledger.describeState();
        assertThatThrownBy(() -> ledger.setLimit(-1, 3)).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("cannot be negative");
        assertThatThrownBy(() -> ledger.setLimit(pagesOf(5), -1)).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("revision cannot be negative");
        assertThat(ledger.describeState()).isEqualTo(before);
        assertThat(ledger.setLimit(pagesOf(4), 2).outcome()).isEqualTo(Outcome.APPLIED);
    }

    @Test
    void noRevisionCanLockTheLimit() {
        String before = ledger.describeState();
        for (long hostile : new long[] {Long.MAX_VALUE, MemoryLimit.MAX_REVISION + 1, Long.MIN_VALUE, -2}) {
            assertThatThrownBy(() -> ledger.setLimit(pagesOf(1), hostile)).as("revision %d", hostile)
                    .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("revision");
            assertThat(ledger.describeState()).as("revision %d changes nothing", hostile).isEqualTo(before);
        }
        // the highest a caller may give applies, and a change without a revision still wins after it
        assertThat(ledger.setLimit(pagesOf(1), MemoryLimit.MAX_REVISION).outcome()).isEqualTo(Outcome.APPLIED);
        assertThat(ledger.setLimit(pagesOf(5), System.currentTimeMillis()).outcome()).isEqualTo(Outcome.STALE);
        assertThat(ledger.setNextLimit(pagesOf(5)))
                .isEqualTo(new LimitResult(Outcome.APPLIED, MemoryLimit.MAX_REVISION + 1, pagesOf(5), 5, 0));
        assertThat(ledger.setNextLimit(pagesOf(6)).revision()).isEqualTo(MemoryLimit.MAX_REVISION + 2);
        assertThat(ledger.stats().limitPages()).isEqualTo(6);
    }

    @Test
    void theNextRevisionFollowsTheOneInForceAndBadBytesChangeNothing() {
        assertThat(ledger.setNextLimit(pagesOf(3))).isEqualTo(new LimitResult(Outcome.APPLIED, 0, pagesOf(3), 3, 0));
        ledger.setLimit(pagesOf(4), 41);
        assertThat(ledger.setNextLimit(pagesOf(2)).revision()).isEqualTo(42);
        String before = ledger.describeState();
        assertThatThrownBy(() -> ledger.setNextLimit(-1)).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("cannot be negative");
        assertThat(ledger.describeState()).isEqualTo(before);
        assertThat(ledger.stats().limitRevision()).isEqualTo(42);
    }

    @Test
    void theRevisionAfterTheLastOneIsRefused() {
        MemoryLimit limit = new MemoryLimit(TestPools.geometry(8, 4));
        limit.apply(pagesOf(2), Long.MAX_VALUE);
        assertThatThrownBy(limit::next).isInstanceOf(IllegalStateException.class).hasMessageContaining("no next revision");
        assertThat(limit.revision()).isEqualTo(Long.MAX_VALUE);
    }

    @Test
    void aLimitBelowThePagesInUseIsDeferredAndConvergesAsBlocksAreFreed() {
        blocks(ledger, 16); // pages 0..3, full
        blocks(ledger, 2);  // page 4, 2 free blocks
        LimitResult deferred = ledger.setLimit(pagesOf(2), 1);
        assertThat(deferred).isEqualTo(new LimitResult(Outcome.DEFERRED, 1, pagesOf(2), 2, 5));
        assertThat(ledger.availableBlocks()).isEqualTo(2);
        assertThat(miss(ledger, 3).missReason()).isEqualTo(MissReason.LIMIT);
        assertThat(blocks(ledger, 2)).containsExactly(18, 19); // pages in use still serve
        ledger.free(range(0, 4));
        assertThat(ledger.pageState(0)).as("given back, not kept, while over the limit").isEqualTo(PageState.RECLAIMED);
        assertThat(ledger.setLimit(pagesOf(2), 1).outcome()).isEqualTo(Outcome.DEFERRED);
        ledger.free(range(4, 12));
        assertThat(ledger.setLimit(pagesOf(2), 1)).isEqualTo(new LimitResult(Outcome.APPLIED, 1, pagesOf(2), 2, 2));
        assertThat(ledger.stats().reservePages()).isZero();
        assertThat(now(ledger.releaseReclaimed())).isEqualTo(3);
        assertThat(ledger.stats().mappedPages()).isEqualTo(2);
        ledger.checkInvariants();
    }

    @Test
    void loweringTheLimitMovesTheReserveAboveItToTheReclaimedList() {
        ledger.free(blocks(ledger, 16));
        assertThat(ledger.stats().reservePages()).isEqualTo(4);
        assertThat(ledger.setLimit(pagesOf(2), 1).outcome()).isEqualTo(Outcome.APPLIED);
        assertThat(ledger.stats().reservePages()).isEqualTo(2);
        assertThat(ledger.stats().reclaimedPages()).isEqualTo(2);
        ledger.checkInvariants();
        // Raised again before the release: the reclaimed pages are kept after all.
        ledger.setLimit(pagesOf(8), 2);
        assertThat(ledger.stats().reservePages()).isEqualTo(4);
        assertThat(now(ledger.releaseReclaimed())).isZero();
        ledger.setLimit(pagesOf(1), 3);
        assertThat(now(ledger.releaseReclaimed())).isEqualTo(3);
        assertThat(ledger.stats().mappedPages()).isEqualTo(1);
        assertThat(ledger.stats().reservePages()).isEqualTo(1);
        ledger.checkInvariants();
    }

    @Test
    void pagesMappedButIdleCountAgainstTheLimitForNewMapsOnly() {
        ledger.free(blocks(ledger, 12)); // pages 0..2 in the reserve
        ledger.setLimit(pagesOf(3), 1);
        // All three idle pages may come into use; a fourth page may not be mapped.
        assertThat(ledger.availableBlocks()).isEqualTo(12);
        assertThat(blocks(ledger, 12)).containsExactlyInAnyOrder(range(0, 12));
        assertThat(mapper.mapCalls).hasSize(1);
        assertThat(miss(ledger, 1).missReason()).isEqualTo(MissReason.LIMIT);
    }
}
