package io.kvpager.cli.demo;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.within;

import io.kvpager.cache.CacheState;
import io.kvpager.cache.CacheStats;
import io.kvpager.cache.GpuStats;
import io.kvpager.cache.PoolStats;
import io.kvpager.cache.RankStats;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class MemoryAccountTest {

    private static final ModelProfile MODEL = ModelProfile.SEVEN_B;
    private static final long PAGE = 2L << 20;
    private static final int BLOCKS_PER_PAGE = MODEL.geometry(1, 1).blocksPerPage();
    private static final double BLOCK = (double) PAGE / BLOCKS_PER_PAGE;

    /**
     * 10 pages mapped: 6 in use with 5 blocks free among them, 3 reserve, 1 waiting for its fence;
     * 1 page more held as an idle handle, 1 more leased: 12 of the GPU's 100 taken.
     */
    private static CacheStats stats() {
        long used = 6L * BLOCKS_PER_PAGE - 5;
        PoolStats pool = new PoolStats(10, 6, 3, 1, 0, 90, used, 100, 0, 0, 0, Map.of(), 10, 0, PAGE);
        RankStats rank = new RankStats("pp0/tp0", true, null, "sim:0", 10, 11, 1, 0, 0, 100 * PAGE);
        GpuStats gpu = new GpuStats("sim:0", List.of("pp0/tp0"), 100 * PAGE, 12 * PAGE, 11 * PAGE, 12 * PAGE, 50 * PAGE, 0, 0, 0, false);
        return new CacheStats("m", 0, List.of(0), 1, CacheState.READY, null, null, pool, List.of(rank), List.of(gpu));
    }

    private static MemoryAccount.Engine engine(MemoryAccount.Wait wait) {
        return engine(wait, 0);
    }

    private static MemoryAccount.Engine engine(MemoryAccount.Wait wait, double thrown) {
        long blocks = 6L * BLOCKS_PER_PAGE - 5;
        // every block written but 40 tokens of the last ones
        return new MemoryAccount.Engine(blocks * MODEL.blockTokens() - 40, blocks, wait, thrown);
    }

    @Test
    void everyByteOfTheBudgetIsCountedOnceFromWhatTheEngineAndTheCachesReport() {
        MemoryAccount account = new MemoryAccount(List.of(MODEL), 1);
        account.sample(0, List.of(engine(MemoryAccount.Wait.NONE)), List.of(stats()), 100 * PAGE);
        account.sample(2, List.of(engine(MemoryAccount.Wait.NONE)), List.of(stats()), 100 * PAGE);
        account.sample(3, List.of(engine(MemoryAccount.Wait.REFUSED, 1000)), List.of(stats()), 100 * PAGE);
        MemoryAccount.Totals t = account.totals();

        // a thousand token-seconds thrown away, at the KV's bytes per token
        assertThat(t.thrownByteSeconds()).isCloseTo(1000 * BLOCK / MODEL.blockTokens(), within(1.0));
        assertThat(t.seconds()).isEqualTo(3);
        assertThat(t.waitingSeconds()).isEqualTo(1);
        assertThat(t.refusedSeconds()).containsExactly(1);
        assertThat(t.heldSeconds()).containsExactly(0);
        double unwritten = 40 * BLOCK / MODEL.blockTokens();
        double written = (6 * BLOCKS_PER_PAGE - 5) * BLOCK - unwritten;
        assertThat(t.byteSeconds()[MemoryAccount.Use.WRITTEN.ordinal()]).isCloseTo(3 * written, within(1.0));
        assertThat(t.byteSeconds()[MemoryAccount.Use.UNWRITTEN.ordinal()]).isCloseTo(3 * unwritten, within(1.0));
        assertThat(t.byteSeconds()[MemoryAccount.Use.FREE_IN_PAGES.ordinal()]).isCloseTo(3 * 5 * BLOCK, within(1.0));
        assertThat(t.byteSeconds()[MemoryAccount.Use.IDLE_PAGES.ordinal()]).isCloseTo(3 * 4 * PAGE, within(1.0));
        assertThat(t.byteSeconds()[MemoryAccount.Use.UNMAPPED_HELD.ordinal()]).isCloseTo(3 * PAGE, within(1.0));
        assertThat(t.byteSeconds()[MemoryAccount.Use.LEASE_SURPLUS.ordinal()]).isCloseTo(3 * PAGE, within(1.0));
        assertThat(t.byteSeconds()[MemoryAccount.Use.NOBODYS.ordinal()]).isCloseTo(3 * 88 * PAGE, within(1.0));
        double shares = 0;
        for (MemoryAccount.Use use : MemoryAccount.Use.values()) {
            shares += t.share(use);
            assertThat(t.waitingShare(use)).isCloseTo(t.share(use), within(1e-9));
        }
        assertThat(shares).isCloseTo(1.0, within(1e-9));
    }

    @Test
    void aSampleThatDoesNotFitIsRefusedAndChangesNothing() {
        MemoryAccount account = new MemoryAccount(List.of(MODEL), 1);
        account.sample(1, List.of(engine(MemoryAccount.Wait.NONE)), List.of(stats()), 100 * PAGE);
        account.sample(2, List.of(engine(MemoryAccount.Wait.HELD)), List.of(stats()), 100 * PAGE);
        MemoryAccount.Totals before = account.totals();

        assertThatThrownBy(() -> account.sample(1.5, List.of(engine(MemoryAccount.Wait.NONE)), List.of(stats()), 100 * PAGE))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("time order");
        assertThatThrownBy(() -> account.sample(3, List.of(), List.of(stats()), 100 * PAGE))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("one engine and one cache per model");

        assertThat(account.totals()).isEqualTo(before);
        assertThat(before.heldSeconds()).containsExactly(1);
    }
}
