package io.kvpager.impl.coordinator;

import io.kvpager.protocol.RankTarget;
import org.junit.jupiter.api.Test;

import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The owner's lease holds only while every rank's last answer proves it: from the moment the
 * request was sent, the lease the rank stated less the margin; never confirmed, or ended, on any
 * rank, and it does not hold.
 */
class OwnerLeaseTest {

    private static final RankTarget TP0 = new RankTarget(0, 0);
    private static final RankTarget TP1 = new RankTarget(0, 1);

    @Test
    void itHoldsOnlyOnceEveryRankConfirmedIt() {
        OwnerLease lease = new OwnerLease(List.of(TP0, TP1));
        assertThat(lease.current()).isFalse();
        lease.confirmed(TP0, System.nanoTime(), 60_000);
        assertThat(lease.current()).as("tp1 never answered").isFalse();
        lease.confirmed(TP1, System.nanoTime(), 60_000);
        assertThat(lease.current()).isTrue();
        assertThat(lease.statedMs()).isEqualTo(60_000);
        assertThat(lease.remainingNanos()).isLessThanOrEqualTo((60_000 - OwnerLease.MARGIN_MS) * 1_000_000);
    }

    @Test
    void itEndsTheStatedLeaseLessTheMarginAfterTheRequestWasSent() {
        OwnerLease lease = new OwnerLease(List.of(TP0));
        // sent 10 s ago (a pause since), with a 2 s lease: over, whenever the answer was read
        lease.confirmed(TP0, System.nanoTime() - 10_000_000_000L, 2_000);
        assertThat(lease.current()).isFalse();
        assertThat(lease.dueForRenewal()).isTrue();
        // sent 1.6 s ago with a 2 s lease: the margin (500 ms) has eaten the rest
        lease.confirmed(TP0, System.nanoTime() - 1_600_000_000L, 2_000);
        assertThat(lease.current()).isFalse();
        // an earlier proof never shortens a later one
        long now = System.nanoTime();
        lease.confirmed(TP0, now, 2_000);
        lease.confirmed(TP0, now - 5_000_000_000L, 2_000);
        assertThat(lease.current()).isTrue();
        assertThat(lease.dueForRenewal()).isFalse();
    }

    @Test
    void theMarginIsAQuarterOfAShortLeaseAndAtMostHalfASecond() {
        assertThat(OwnerLease.marginMs(60_000)).isEqualTo(500);
        assertThat(OwnerLease.marginMs(1_000)).isEqualTo(250);
        assertThat(OwnerLease.marginMs(0)).isZero();
    }

    @Test
    void aLeaseTooShortToOutlastARoundTripFencesNothingAndIsNeverRenewed() {
        OwnerLease lease = new OwnerLease(List.of(TP0));
        assertThat(lease.fences()).as("before any rank stated a lease").isTrue();
        lease.confirmed(TP0, System.nanoTime(), 0);
        assertThat(lease.current()).isFalse();
        assertThat(lease.fences()).isFalse();
        assertThat(lease.dueForRenewal()).isFalse();
        lease.confirmed(TP0, System.nanoTime(), 134);
        assertThat(lease.fences()).as("134 ms less a 33 ms margin").isTrue();
    }

    @Test
    void aRankThatStatesNoLeaseNeverEndsIt() {
        OwnerLease lease = new OwnerLease(List.of(TP0, TP1));
        lease.confirmed(TP0, System.nanoTime() - 3_600_000_000_000L, -1);
        lease.confirmed(TP1, System.nanoTime() - 3_600_000_000_000L, -1);
        assertThat(lease.current()).isTrue();
        assertThat(lease.remainingNanos()).isEqualTo(Long.MAX_VALUE);
        assertThat(lease.dueForRenewal()).isFalse();
    }
}
