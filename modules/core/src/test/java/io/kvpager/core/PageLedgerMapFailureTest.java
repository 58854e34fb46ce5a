package io.kvpager.core;

import static io.kvpager.core.Ledgers.blocks;
import static io.kvpager.core.Ledgers.miss;
import static io.kvpager.core.Ledgers.now;
import static io.kvpager.core.Ledgers.range;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.kvpager.Allocation;
import io.kvpager.MissReason;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import org.junit.jupiter.api.Test;

class PageLedgerMapFailureTest {

    private final ScriptedMapper mapper = new ScriptedMapper();

    private static PageMapFailure failure(MissReason reason, String message, int... quarantined) {
        return new PageMapFailure(reason, message, quarantined, null);
    }

    /** Page 0 in the reserve, page 1 in use with 3 free blocks. */
    private PageLedger partlyUsedWithReserve() {
        PageLedger ledger = new PageLedger(TestPools.geometry(6, 8), mapper, ReserveMarks.fixed(0, 2));
        int[] full = blocks(ledger, 8);
        blocks(ledger, 5);
        ledger.free(full);
        assertThat(ledger.pageState(0)).isEqualTo(PageState.RESERVE);
        return ledger;
    }

    @Test
    void aFailedMapGivesBackEveryBlockAndPageItTook() {
        PageLedger ledger = partlyUsedWithReserve();
        String before = ledger.describeState();
        LedgerStats stats = ledger.stats();
        int available = ledger.availableBlocks();
        mapper.nextMap(new ScriptedMapper.Fail(failure(MissReason.OUT_OF_MEMORY,
                "fake:0 page 2: cuMemCreate failed: CUDA_ERROR_OUT_OF_MEMORY")));

        Allocation miss = miss(ledger, 3 + 8 + 8); // page 1's 3 blocks, the reserve page, one new page
        assertThat(miss.missReason()).isEqualTo(MissReason.OUT_OF_MEMORY);
        assertThat(miss.detail()).isEqualTo("fake:0 page 2: cuMemCreate failed: CUDA_ERROR_OUT_OF_MEMORY");
        assertThat(mapper.mapCalls.getLast()).containsExactly(2);
        assertThat(ledger.describeState()).isEqualTo(before);
        assertThat(ledger.availableBlocks()).isEqualTo(available);
        LedgerStats after = ledger.stats();
        assertThat(after.missCount(MissReason.OUT_OF_MEMORY)).isEqualTo(1);
        assertThat(after.usedBlocks()).isEqualTo(stats.usedBlocks());
        assertThat(after.allocs()).isEqualTo(stats.allocs());
        assertThat(after.mappedPages()).isEqualTo(stats.mappedPages());
        assertThat(after.freePages()).isEqualTo(stats.freePages());

        int[] retry = blocks(ledger, 19);
        assertThat(retry).contains(13, 14, 15).contains(range(0, 8)).contains(range(16, 24));
    }

    /** The GPU's budget misses with GPU_SHARE, the pool's own limit with LIMIT. */
    @Test
    void aGpuShareRefusalIsAGpuShareMissNotALimitOne() {
        PageLedger ledger = partlyUsedWithReserve();
        mapper.nextMap(new ScriptedMapper.Fail(PageMapFailure.gpuShare("gpu sim:0 has no room for 1 page")));
        Allocation shared = miss(ledger, 19);
        assertThat(shared.missReason()).isEqualTo(MissReason.GPU_SHARE);
        assertThat(shared.gpuShare()).isTrue();
        assertThat(shared.detail()).isEqualTo("gpu sim:0 has no room for 1 page");

        ledger.setLimit(ledger.stats().mappedPages() * TestPools.geometry(6, 8).bytesPerPageId(), 1);
        Allocation own = miss(ledger, 19);
        assertThat(own.missReason()).isEqualTo(MissReason.LIMIT);
        assertThat(own.gpuShare()).isFalse();
    }

    @Test
    void aMapperThatThrowsIsAFailedMap() {
        PageLedger ledger = partlyUsedWithReserve();
        String before = ledger.describeState();
        mapper.nextMap(new ScriptedMapper.Throw(new IllegalStateException("connection reset")));
        Allocation miss = miss(ledger, 19);
        assertThat(miss.missReason()).isEqualTo(MissReason.MAP_FAILED);
        assertThat(miss.detail()).isEqualTo("connection reset");
        assertThat(ledger.describeState()).isEqualTo(before);
    }

    @Test
    void theMissReasonIsTheFailuresOwnElseMapFailed() {
        PageLedger ledger = new PageLedger(TestPools.geometry(4, 4), mapper, ReserveMarks.none());
        mapper.nextMap(new ScriptedMapper.Fail(failure(MissReason.RANK_DOWN, "pp0/tp1 is down")));
        mapper.nextMap(new ScriptedMapper.Fail(new CompletionException(new RuntimeException("pp0/tp1 timed out"))));
        mapper.nextMap(new ScriptedMapper.Fail(failure(null, "no reason given")));
        assertThat(miss(ledger, 1).missReason()).isEqualTo(MissReason.RANK_DOWN);
        Allocation timeout = miss(ledger, 1);
        assertThat(timeout.missReason()).isEqualTo(MissReason.MAP_FAILED);
        assertThat(timeout.detail()).isEqualTo("pp0/tp1 timed out");
        assertThat(miss(ledger, 1).missReason()).isEqualTo(MissReason.MAP_FAILED);
        LedgerStats stats = ledger.stats();
        assertThat(stats.missCount(MissReason.RANK_DOWN)).isEqualTo(1);
        assertThat(stats.missCount(MissReason.MAP_FAILED)).isEqualTo(2);
        assertThat(stats.totalMisses()).isEqualTo(3);
        assertThat(stats.freePages()).isEqualTo(4);
        assertThat(stats.mapCalls()).isEqualTo(3);
        assertThat(stats.maps()).isZero();
    }

    @Test
    void quarantinedPagesAreNeverHandedOutAgain() {
        PageLedger ledger = new PageLedger(TestPools.geometry(3, 4), mapper, ReserveMarks.none());
        // The failure quarantines page 0 of its batch; page 2, outside the batch, is not its to judge.
        mapper.nextMap(new ScriptedMapper.Fail(failure(MissReason.MAP_FAILED, "pp0/tp1 page 0: undo failed", 0, 2)));
        miss(ledger, 2);
        assertThat(ledger.pageState(0)).isEqualTo(PageState.QUARANTINED);
        assertThat(ledger.pageState(2)).isEqualTo(PageState.FREE);
        assertThat(ledger.stats().quarantinedPages()).isEqualTo(1);
        assertThat(ledger.availableBlocks()).isEqualTo(8);
        assertThat(blocks(ledger, 8)).containsExactly(range(4, 12));
        Allocation none = miss(ledger, 1);
        assertThat(none.missReason()).isEqualTo(MissReason.NO_PAGES);
        assertThat(none.detail()).contains("1 quarantined");
        ledger.free(range(4, 12));
        ledger.checkInvariants();
        assertThat(ledger.stats().reclaimedPages()).isEqualTo(2); // no reserve: emptied pages wait to be unmapped
        assertThat(now(ledger.trim())).isEqualTo(2);
    }

    @Test
    void blocksClaimedByAnAllocationWaitingOnItsMapAreNotTheCallersYet() {
        PageLedger ledger = new PageLedger(TestPools.geometry(4, 8), mapper, ReserveMarks.none());
        blocks(ledger, 6);
        mapper.holding = true;
        // 2 free blocks of page 0 and a new page of 8: the new page is filled, page 0 gives the 2 left over
        CompletableFuture<Allocation> pending = ledger.alloc(10).toCompletableFuture();
        assertThat(pending).isNotDone();
        ledger.checkInvariants();
        assertThat(ledger.pageState(1)).isEqualTo(PageState.MAPPING);
        assertThat(ledger.stats().usedBlocks()).isEqualTo(8);
        assertThat(ledger.stats().mappingPages()).isEqualTo(1);
        String before = ledger.describeState();
        assertThatThrownBy(() -> ledger.free(new int[] {6})).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("block 6 is not allocated yet");
        assertThat(ledger.describeState()).isEqualTo(before);
        // Others may allocate meanwhile; they never get the claimed blocks.
        CompletableFuture<Allocation> other = ledger.alloc(2).toCompletableFuture();
        mapper.releaseAll();
        assertThat(pending.join().blocks()).containsExactly(range(6, 16));
        assertThat(other.join().blocks()).containsExactly(16, 17);
        ledger.checkInvariants();
        ledger.free(new int[] {6});
    }

    @Test
    void aFailedMapFinishingLateGivesBackThroughTheLedgerAsItIsThen() {
        PageLedger ledger = new PageLedger(TestPools.geometry(4, 4), mapper, ReserveMarks.fixed(0, 2));
        int[] first = blocks(ledger, 2);
        mapper.holding = true;
        mapper.nextMap(new ScriptedMapper.Fail(failure(MissReason.OUT_OF_MEMORY, "no memory")));
        CompletableFuture<Allocation> pending = ledger.alloc(5).toCompletableFuture(); // claims 2, 3; maps page 1
        long fence = ledger.fence();
        ledger.free(first); // page 0 still holds the claimed blocks
        assertThat(ledger.pageState(0)).isEqualTo(PageState.IN_USE);
        mapper.releaseAll();
        mapper.holding = false;
        assertThat(pending.join().missReason()).isEqualTo(MissReason.OUT_OF_MEMORY);
        // Page 0 emptied by the rollback: idle, held back by the fence that was open when its blocks were freed.
        assertThat(ledger.pageState(0)).isEqualTo(PageState.RESERVE);
        assertThat(ledger.pageState(1)).isEqualTo(PageState.FREE);
        ledger.checkInvariants();
        assertThat(now(ledger.trim())).isZero();
        ledger.retire(fence);
        assertThat(now(ledger.trim())).isEqualTo(1);
        ledger.checkInvariants();
    }

    @Test
    void aFailedRefillLeavesItsPagesFreeAndFailsItsStage() {
        PageLedger ledger = new PageLedger(TestPools.geometry(4, 4), mapper, ReserveMarks.fixed(2, 3));
        mapper.nextMap(new ScriptedMapper.Fail(failure(MissReason.OUT_OF_MEMORY, "no memory", 1)));
        CompletableFuture<Integer> refill = ledger.refill().toCompletableFuture();
        assertThat(refill).isCompletedExceptionally();
        assertThatThrownBy(refill::join).hasCauseInstanceOf(PageMapFailure.class);
        assertThat(ledger.pageState(0)).isEqualTo(PageState.FREE);
        assertThat(ledger.pageState(1)).isEqualTo(PageState.QUARANTINED);
        assertThat(ledger.stats().reservePages()).isZero();
        ledger.checkInvariants();
        assertThat(now(ledger.refill())).isEqualTo(3);
        assertThat(mapper.mapCalls.getLast()).containsExactly(0, 2, 3);
    }

    @Test
    void aFailedUnmapKeepsItsPagesMappedAndIdleExceptTheQuarantined() {
        PageLedger ledger = new PageLedger(TestPools.geometry(4, 4), mapper, ReserveMarks.fixed(0, 4));
        ledger.free(blocks(ledger, 12));
        assertThat(ledger.stats().reservePages()).isEqualTo(3);
        mapper.nextUnmap(new ScriptedMapper.Fail(failure(MissReason.MAP_FAILED, "pp0/tp1 page 1: cuMemUnmap failed", 1)));
        CompletableFuture<Integer> trim = ledger.trim().toCompletableFuture();
        assertThatThrownBy(trim::join).hasCauseInstanceOf(PageMapFailure.class).hasMessageContaining("cuMemUnmap failed");
        assertThat(ledger.pageState(1)).isEqualTo(PageState.QUARANTINED);
        assertThat(ledger.stats().reservePages()).isEqualTo(2);
        assertThat(ledger.stats().mappedPages()).isEqualTo(2);
        ledger.checkInvariants();
        mapper.nextUnmap(new ScriptedMapper.Throw(new IllegalStateException("gone")));
        assertThatThrownBy(() -> now(ledger.trim())).hasRootCauseMessage("gone");
        assertThat(ledger.stats().reservePages()).isEqualTo(2);
        assertThat(now(ledger.trim())).isEqualTo(2);
        assertThat(ledger.stats().mappedPages()).isZero();
        assertThat(ledger.stats().unmapCalls()).isEqualTo(3);
        assertThat(ledger.stats().unmaps()).isEqualTo(2);
        ledger.checkInvariants();
    }
}
