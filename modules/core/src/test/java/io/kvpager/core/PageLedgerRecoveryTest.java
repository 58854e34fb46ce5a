package io.kvpager.core;

import static io.kvpager.core.Ledgers.blocks;
import static io.kvpager.core.Ledgers.miss;
import static io.kvpager.core.Ledgers.range;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.kvpager.MissReason;
import org.junit.jupiter.api.Test;

/** Quarantined pages come back to FREE once every rank confirmed them released, and only they do. */
class PageLedgerRecoveryTest {

    private final ScriptedMapper mapper = new ScriptedMapper();

    /** Pages 0 and 1 quarantined by a failed map, nothing else used. */
    private PageLedger withQuarantine() {
        PageLedger ledger = new PageLedger(TestPools.geometry(4, 4), mapper, ReserveMarks.none());
        mapper.nextMap(new ScriptedMapper.Fail(new PageMapFailure(MissReason.MAP_FAILED, "pp0/tp1 could not undo its part",
                new int[] {0, 1}, null)));
        miss(ledger, 8);
        assertThat(ledger.quarantined()).containsExactly(0, 1);
        return ledger;
    }

    @Test
    void recoveredPagesAreFreeAndHandedOutAgain() {
        PageLedger ledger = withQuarantine();
        mapper.released(new int[] {0, 1});
        ledger.recovered(new int[] {1, 0});
        assertThat(ledger.pageState(0)).isEqualTo(PageState.FREE);
        assertThat(ledger.pageState(1)).isEqualTo(PageState.FREE);
        assertThat(ledger.quarantined()).isEmpty();
        assertThat(ledger.stats().quarantinedPages()).isZero();
        assertThat(ledger.stats().freePages()).isEqualTo(4);
        ledger.checkInvariants();
        assertThat(blocks(ledger, 16)).containsExactlyInAnyOrder(range(0, 16));
        ledger.checkInvariants();
    }

    @Test
    void aPartOfTheQuarantineCanBeRecovered() {
        PageLedger ledger = withQuarantine();
        ledger.recovered(new int[] {1});
        assertThat(ledger.quarantined()).containsExactly(0);
        assertThat(ledger.stats().quarantinedPages()).isEqualTo(1);
        ledger.checkInvariants();
    }

    @Test
    void onlyQuarantinedPagesListedOnceAreRecoveredAndARefusalChangesNothing() {
        PageLedger ledger = withQuarantine();
        blocks(ledger, 1); // page 2 in use
        String before = ledger.describeState();
        assertThatThrownBy(() -> ledger.recovered(null)).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> ledger.recovered(new int[] {0, 2}))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("page 2 is IN_USE, not QUARANTINED");
        assertThatThrownBy(() -> ledger.recovered(new int[] {0, 3}))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("page 3 is FREE");
        assertThatThrownBy(() -> ledger.recovered(new int[] {1, 1}))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("page 1 is listed twice");
        assertThatThrownBy(() -> ledger.recovered(new int[] {0, 4}))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("out of range");
        assertThatThrownBy(() -> ledger.recovered(new int[] {-1}))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("out of range");
        assertThat(ledger.describeState()).isEqualTo(before);
        assertThat(ledger.quarantined()).containsExactly(0, 1);
        ledger.checkInvariants();
    }

    @Test
    void aPageQuarantinedByAFailedUnmapIsRecoveredToo() {
        PageLedger ledger = new PageLedger(TestPools.geometry(3, 4), mapper, ReserveMarks.none());
        ledger.free(blocks(ledger, 4));
        mapper.nextUnmap(new ScriptedMapper.Fail(new PageMapFailure(MissReason.MAP_FAILED, "unmap failed", new int[] {0}, null)));
        assertThat(ledger.releaseReclaimed().toCompletableFuture()).isCompletedExceptionally();
        assertThat(ledger.quarantined()).containsExactly(0);
        mapper.released(new int[] {0});
        ledger.recovered(ledger.quarantined());
        assertThat(ledger.pageState(0)).isEqualTo(PageState.FREE);
        assertThat(ledger.stats().mappedPages()).isZero();
        ledger.checkInvariants();
    }
}
