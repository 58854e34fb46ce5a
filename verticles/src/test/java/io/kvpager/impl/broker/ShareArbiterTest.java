package io.kvpager.impl.broker;

import io.kvpager.protocol.Owner;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class ShareArbiterTest {

    private static final long CAPACITY = 1_000;
    private static final Owner A = new Owner("node-a", 1);
    private static final Owner B = new Owner("node-b", 1);
    private static final Owner C = new Owner("node-c", 1);

    private static GpuShares shares(long a, long b, long c) {
        return GpuShares.NONE.with("a", new GpuShares.Share(A, a)).with("b", new GpuShares.Share(B, b))
                .with("c", new GpuShares.Share(C, c));
    }

    @Test
    void theGuaranteesAreTheAsksAndAnEqualSplitOfWhatTheyLeave() {
        GpuShares s = GpuShares.NONE.with("a", new GpuShares.Share(A, 0, Guarantee.ofBytes(300), false))
                .with("b", new GpuShares.Share(B, 0, Guarantee.ofPercent(10), false))
                .with("c", new GpuShares.Share(C, 0)).with("d", new GpuShares.Share(new Owner("node-d", 1), 0));
        assertThat(ShareArbiter.guarantees(s, CAPACITY)).containsExactly(java.util.Map.entry("a", 300L), java.util.Map.entry("b", 100L),
                java.util.Map.entry("c", 300L), java.util.Map.entry("d", 300L));
        // as pools go, the split grows
        assertThat(ShareArbiter.guarantee(s.without("d"), CAPACITY, "c")).isEqualTo(600);
        assertThat(ShareArbiter.guarantee(shares(0, 0, 0), CAPACITY, "a")).isEqualTo(333);
    }

    @Test
    void asksBeyondTheCapacityAreRefusedAndNeverAddUpToMoreThanIt() {
        GpuShares s = GpuShares.NONE.with("a", new GpuShares.Share(A, 0, Guarantee.ofPercent(70), false));
        assertThat(ShareArbiter.refusesAsk(s, CAPACITY, "b", Guarantee.ofPercent(30))).isNull();
        assertThat(ShareArbiter.refusesAsk(s, CAPACITY, "b", Guarantee.ofBytes(301)))
                .isEqualTo("a guarantee of 301 bytes (301 bytes) does not fit: the other pools on it are guaranteed 700 of its 1000 bytes");
        assertThat(ShareArbiter.refusesAsk(s, CAPACITY, "a", Guarantee.ofPercent(100))).as("its own ask is replaced").isNull();
        // were they recorded anyway (another capacity registered), they are scaled down to it
        GpuShares over = s.with("b", new GpuShares.Share(B, 0, Guarantee.ofBytes(700), false));
        assertThat(ShareArbiter.guarantees(over, CAPACITY).values()).containsExactly(500L, 500L);
        assertThatThrownBy(() -> Guarantee.ofPercent(101)).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> new Guarantee(5, 5)).hasMessageContaining("bytes >= 0, or a percent");
    }

    @Test
    void aPoolBorrowsWhatIsFreeUnlessCappedRestrainedOrAnotherWaits() {
        // guarantees 333 each; c holds nothing of its 333: a borrows all that is free
        GpuShares s = shares(100, 500, 0);
        assertThat(ShareArbiter.most(s, CAPACITY, "a", false, 0)).isEqualTo(500);
        assertThat(ShareArbiter.most(s, CAPACITY, "a", true, 0)).isEqualTo(333);
        GpuShares capped = ShareArbiter.cap(s, "b");
        assertThat(ShareArbiter.most(capped, CAPACITY, "b", false, 0)).as("keeps what it holds, grows no further").isEqualTo(500);
        GpuShares waiting = ShareArbiter.waiting(s, "c", 50);
        assertThat(ShareArbiter.most(waiting, CAPACITY, "a", false, 49)).isEqualTo(333);
        assertThat(ShareArbiter.most(waiting, CAPACITY, "a", false, 50)).as("the wait has expired").isEqualTo(500);
        // c may borrow too, all that is free
        assertThat(ShareArbiter.most(waiting, CAPACITY, "c", false, 0)).as("not held by its own wait").isEqualTo(400);
    }

    @Test
    void borrowingTakesAllThatIsFreeAndNeverCutsIntoAGuarantee() {
        // b and c idle: a borrows the whole capacity, nothing is kept free for their next burst
        GpuShares idle = shares(0, 0, 0);
        assertThat(ShareArbiter.most(idle, CAPACITY, "a", false, 0)).isEqualTo(1000);
        assertThat(ShareArbiter.most(shares(900, 0, 0), CAPACITY, "a", false, 0)).as("keeps what it holds").isEqualTo(1000);
        // what b gets within its guarantee while a borrows comes from a reclaim
        assertThat(ShareArbiter.plan(shares(900, 0, 0), CAPACITY, "b", 150).asks()).containsOnlyKeys("a");
        // a pool within its guarantee takes what is free up to it
        assertThat(ShareArbiter.most(shares(0, 600, 0), CAPACITY, "a", false, 0)).isEqualTo(400);
        // first-come (every guarantee 0): nothing is held back
        GpuShares firstCome = GpuShares.NONE.with("a", new GpuShares.Share(A, 0, Guarantee.ofPercent(0), false))
                .with("b", new GpuShares.Share(B, 0, Guarantee.ofPercent(0), false));
        assertThat(ShareArbiter.most(firstCome, CAPACITY, "a", false, 0)).isEqualTo(1000);
    }

    @Test
    void aCapIsLiftedOnceTheShareIsWithinTheGuarantee() {
        GpuShares capped = ShareArbiter.cap(shares(100, 600, 0), "b");
        assertThat(ShareArbiter.settle(capped, CAPACITY, "b").of("b").capped()).isTrue();
        GpuShares under = capped.with("b", B, 333);
        assertThat(under.of("b").capped()).as("bytes change, the cap stays").isTrue();
        assertThat(ShareArbiter.settle(under, CAPACITY, "b").of("b").capped()).isFalse();
    }

    @Test
    void aReclaimAsksTheLargestExcessFirstAndNeverAPoolWithinItsGuarantee() {
        // guarantees 333 each; b is 367 above, c 67 above, a holds 0
        GpuShares s = shares(0, 700, 300);
        ShareArbiter.Plan plan = ShareArbiter.plan(s, CAPACITY, "a", 200);
        assertThat(plan.feasible()).isTrue();
        // 200 needed, plus half of the 133 left up to a's guarantee
        assertThat(plan.shortfall()).isEqualTo(266);
        assertThat(plan.asks()).containsExactly(java.util.Map.entry("b", 266L));
        GpuShares two = shares(0, 400, 400);
        // 100 needed plus 16 of headroom, from b and c, 67 above their guarantees each
        assertThat(ShareArbiter.plan(two, CAPACITY, "a", 300).asks()).containsExactly(java.util.Map.entry("b", 67L),
                java.util.Map.entry("c", 49L));
        // c within its guarantee is never asked
        GpuShares within = shares(0, 667, 333);
        assertThat(ShareArbiter.plan(within, CAPACITY, "a", 333).asks()).containsOnlyKeys("b");
    }

    @Test
    void aReclaimAsksForHeadroomTowardTheGuaranteeButNeverMoreThanTheBorrowersHoldAboveTheirs() {
        // a holds 100 of its 333 and needs 50 more; nothing is free: it asks for the 50 and half of the 183 left
        GpuShares s = shares(100, 600, 300);
        ShareArbiter.Plan plan = ShareArbiter.plan(s, CAPACITY, "a", 150);
        assertThat(plan.shortfall()).isEqualTo(50 + 91);
        assertThat(plan.asks()).containsExactly(java.util.Map.entry("b", 141L));
        // two borrowers, 20 and 14 above their guarantees: the largest excess gives first, then the next
        GpuShares two = shares(300, 353, 347);
        ShareArbiter.Plan both = ShareArbiter.plan(two, CAPACITY, "a", 320);
        assertThat(both.shortfall()).isEqualTo(20 + 6);
        assertThat(both.asks()).containsExactly(java.util.Map.entry("b", 20L), java.util.Map.entry("c", 6L));
        // a take up to the guarantee has no headroom left to ask for
        assertThat(ShareArbiter.plan(shares(0, 700, 300), CAPACITY, "a", 333).shortfall()).isEqualTo(333);
    }

    @Test
    void aReclaimBeyondTheGuaranteeOrBeyondTheOthersExcessIsRefusedSayingWhy() {
        GpuShares s = shares(300, 700, 0);
        assertThat(ShareArbiter.plan(s, CAPACITY, "a", 301).feasible()).as("fits").isTrue();
        ShareArbiter.Plan above = ShareArbiter.plan(shares(300, 700, 0), CAPACITY, "a", 400);
        assertThat(above.refusal()).isEqualTo("it would take its share to 400 bytes, above its guarantee of 333, and the other pools leave 300 bytes");
        ShareArbiter.Plan firstCome = ShareArbiter.plan(GpuShares.NONE.with("a", new GpuShares.Share(A, 0, Guarantee.ofPercent(0), false))
                .with("b", new GpuShares.Share(B, 1_000, Guarantee.ofPercent(0), false)), CAPACITY, "a", 10);
        assertThat(firstCome.refusal()).contains("above its guarantee of 0");
        assertThat(firstCome.asks()).isEmpty();
        // within its guarantee there is always enough above the others' guarantees: they add up to the capacity at most
        ShareArbiter.Plan within = ShareArbiter.plan(GpuShares.NONE.with("a", new GpuShares.Share(A, 0, Guarantee.ofPercent(50), false))
                .with("b", new GpuShares.Share(B, 600, Guarantee.ofPercent(50), false)), CAPACITY, "a", 500);
        assertThat(within.feasible()).isTrue();
        assertThat(within.asks()).containsExactly(java.util.Map.entry("b", 100L));
    }

    @Test
    void aPoolAskedHasGivenBackWhenItHoldsWhatItWasAskedLessOrIsWithinItsGuarantee() {
        assertThat(ShareArbiter.gaveBack(shares(0, 700, 0), CAPACITY, "b", 700, 100)).isFalse();
        assertThat(ShareArbiter.gaveBack(shares(0, 600, 0), CAPACITY, "b", 700, 100)).isTrue();
        assertThat(ShareArbiter.gaveBack(shares(0, 330, 0), CAPACITY, "b", 700, 500)).isTrue();
        assertThat(ShareArbiter.gaveBack(shares(0, 0, 0).without("b"), CAPACITY, "b", 700, 500)).isTrue();
    }

    @Test
    void theSharesRecordReadsBackWithGuaranteesCapsAndWaitsAndReadsTheOlderForm() {
        GpuShares s = ShareArbiter.waiting(ShareArbiter.cap(GpuShares.NONE.with("a", new GpuShares.Share(A, 5, Guarantee.ofPercent(20), false))
                .with("b", new GpuShares.Share(B, 7, Guarantee.ofBytes(9), false)).with("c", C, 1), "a"), "c", 1234);
        assertThat(GpuShares.parse(s.encode())).isEqualTo(s);
        assertThat(GpuShares.parse("{\"p\":{\"owner\":\"node-a#1\",\"bytes\":3}}").of("p")).isEqualTo(new GpuShares.Share(A, 3));
    }
}
