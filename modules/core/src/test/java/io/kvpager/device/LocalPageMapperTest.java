package io.kvpager.device;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.kvpager.Allocation;
import io.kvpager.FailureCode;
import io.kvpager.Geometry;
import io.kvpager.Layout;
import io.kvpager.MissReason;
import io.kvpager.core.Ledgers;
import io.kvpager.core.PageLedger;
import io.kvpager.core.PageMapFailure;
import io.kvpager.core.PageMapper;
import io.kvpager.core.ReserveMarks;
import io.kvpager.spi.DeviceException;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import org.junit.jupiter.api.Test;

/**
 * The local mapper, and through it the device-side code a rank worker runs ({@link GroupTensors}
 * with its handle pool and undo log), on a device that keeps the driver's rules and fails the
 * calls a test scripts.
 */
class LocalPageMapperTest {

    private static final long MIB = 1L << 20;
    private static final Geometry PAGE_MAJOR = new Geometry(4, 2, 32 * 1024, 2 * MIB, 8, Layout.PAGE_MAJOR);
    private static final Geometry PER_LAYER = new Geometry(4, 2, 32 * 1024, 2 * MIB, 8, Layout.PER_LAYER);
    private static final HandlePoolOptions NO_IDLE_HANDLES = new HandlePoolOptions(0, 0);

    private final FakeDevice device = new FakeDevice(1L << 40);

    private static void ok(CompletionStage<Void> stage) {
        CompletableFuture<Void> future = stage.toCompletableFuture();
        assertThat(future).isDone();
        future.join();
    }

    private static Throwable failure(CompletionStage<Void> stage) {
        CompletableFuture<Void> future = stage.toCompletableFuture();
        assertThat(future).isCompletedExceptionally();
        return future.handle((v, e) -> e).join();
    }

    private static RankException rankFailure(Throwable failure) {
        assertThat(failure).isInstanceOf(PageMapFailure.class).hasCauseInstanceOf(RankException.class);
        return (RankException) failure.getCause();
    }

    @Test
    void pageMajorMapsOneCompoundHandlePerPageIdAndSynchronizesAfter() {
        LocalPageMapper mapper = new LocalPageMapper(device, PAGE_MAJOR);
        GroupTensors tensors = mapper.tensors();
        assertThat(tensors.rangeBases()).hasSize(1);
        assertThat(device.reservedRanges()).isEqualTo(1);
        ok(mapper.map(new int[] {0, 3}));
        assertThat(device.liveHandles()).isEqualTo(2);
        assertThat(device.memoryInfo().usedBytes()).isEqualTo(2 * 16 * MIB);
        assertThat(tensors.address(3, 0)).isEqualTo(tensors.rangeBases()[0] + 3 * 16 * MIB);
        assertThat(device.isAccessible(tensors.address(0, 0))).isTrue();
        assertThat(device.isAccessible(tensors.address(3, 0))).isTrue();
        assertThat(device.log.getLast()).isEqualTo("cuCtxSynchronize");
        assertThat(tensors.mapped(3)).isTrue();
        assertThat(tensors.mapped(1)).isFalse();
        assertThat(tensors.mappedPages()).isEqualTo(2);
    }

    @Test
    void perLayerMapsOneHandlePerLayerAndBuffer() {
        LocalPageMapper mapper = new LocalPageMapper(device, PER_LAYER);
        long[] bases = mapper.tensors().rangeBases();
        assertThat(bases).hasSize(8);
        ok(mapper.map(new int[] {1}));
        assertThat(device.liveHandles()).isEqualTo(8);
        for (long base : bases) {
            assertThat(device.isAccessible(base + 2 * MIB)).isTrue();
        }
        assertThat(device.log.stream().filter("cuMemSetAccess"::equals).count()).isEqualTo(8);
    }

    @Test
    void unmappingSynchronizesFirstThenGivesTheMemoryBack() {
        LocalPageMapper mapper = new LocalPageMapper(device, PER_LAYER, false, NO_IDLE_HANDLES);
        ok(mapper.map(new int[] {0, 1, 2}));
        device.log.clear();
        ok(mapper.unmap(new int[] {2, 0}));
        assertThat(device.log.getFirst()).isEqualTo("cuCtxSynchronize");
        assertThat(device.log.stream().filter("cuMemUnmap"::equals).count()).isEqualTo(16);
        assertThat(device.log.stream().filter("cuMemRelease"::equals).count()).isEqualTo(16);
        assertThat(device.heldHandles()).isEqualTo(8);
        assertThat(mapper.tensors().mappedPages()).isEqualTo(1);
        assertThat(mapper.tensors().mapped(1)).isTrue();
    }

    @Test
    void byDefaultAPerLayerMapperKeepsUnmappedHandlesForTheNextMapAsARankDoes() {
        LocalPageMapper mapper = new LocalPageMapper(device, PER_LAYER);
        ok(mapper.map(new int[] {0, 1}));
        ok(mapper.unmap(new int[] {0, 1}));
        assertThat(device.log).doesNotContain("cuMemRelease");
        assertThat(mapper.handles().idleHandles()).isEqualTo(16);
        assertThat(device.heldHandles()).isEqualTo(16);
        device.log.clear();
        ok(mapper.map(new int[] {5}));
        assertThat(device.log).doesNotContain("cuMemCreate");
        assertThat(mapper.handles().idleHandles()).isEqualTo(8);
        mapper.close();
        assertThat(device.heldHandles()).isZero();
    }

    @Test
    void aFailureInABatchUndoesTheWholeBatch() {
        LocalPageMapper mapper = new LocalPageMapper(device, PAGE_MAJOR);
        ok(mapper.map(new int[] {7}));
        device.failOn("cuMemMap", 3, DeviceException.UNKNOWN);
        Throwable failure = failure(mapper.map(new int[] {0, 1, 2, 3}));
        assertThat(failure).hasMessage("fake:0 page 2: cuMemMap failed: CUDA_ERROR_UNKNOWN (injected)");
        RankException cause = rankFailure(failure);
        assertThat(cause.code()).isEqualTo(FailureCode.DRIVER_ERROR);
        assertThat(cause.page()).isEqualTo(2);
        assertThat(cause.rollbackComplete()).isTrue();
        assertThat(cause.unrestoredPages()).isEmpty();
        assertThat(cause).hasCauseInstanceOf(DeviceException.class);
        assertThat(((PageMapFailure) failure).reason()).isEqualTo(MissReason.MAP_FAILED);
        assertThat(((PageMapFailure) failure).quarantined()).isEmpty();
        assertThat(device.mappingCount()).isEqualTo(1);
        assertThat(device.heldHandles()).isEqualTo(1);
        assertThat(mapper.tensors().mappedPages()).isEqualTo(1);
        ok(mapper.map(new int[] {0, 1, 2, 3}));
    }

    @Test
    void aFailedSetAccessOrSynchronizeUndoesTheBatchToo() {
        LocalPageMapper mapper = new LocalPageMapper(device, PER_LAYER);
        device.failOn("cuMemSetAccess", 11, DeviceException.UNKNOWN);
        assertThat(failure(mapper.map(new int[] {0, 1}))).hasMessageContaining("page 1: cuMemSetAccess failed");
        assertThat(device.heldHandles()).as("the handles the batch created are released, not kept idle").isZero();
        device.failOn("cuCtxSynchronize", 1, DeviceException.ILLEGAL_ADDRESS);
        assertThat(failure(mapper.map(new int[] {0, 1}))).hasMessage("fake:0: cuCtxSynchronize failed: CUDA_ERROR_ILLEGAL_ADDRESS (injected)");
        assertThat(device.heldHandles()).isZero();
        assertThat(device.mappingCount()).isZero();
        assertThat(mapper.tensors().mappedPages()).isZero();
    }

    @Test
    void anOutOfMemoryDeviceIsAnOutOfMemoryFailure() {
        FakeDevice small = new FakeDevice(40 * MIB); // two compound handles of 16 MiB
        LocalPageMapper mapper = new LocalPageMapper(small, PAGE_MAJOR);
        Throwable failure = failure(mapper.map(new int[] {0, 1, 2}));
        assertThat(((PageMapFailure) failure).reason()).isEqualTo(MissReason.OUT_OF_MEMORY);
        assertThat(rankFailure(failure).code()).isEqualTo(FailureCode.OUT_OF_MEMORY);
        assertThat(failure).hasMessageContaining("page 2: cuMemCreate failed: CUDA_ERROR_OUT_OF_MEMORY");
        assertThat(small.memoryInfo().usedBytes()).isZero();
        ok(mapper.map(new int[] {0, 1}));
    }

    @Test
    void aPageThatCannotBeUndoneIsQuarantined() {
        LocalPageMapper mapper = new LocalPageMapper(device, PAGE_MAJOR);
        device.failOn("cuMemCreate", 2, DeviceException.OUT_OF_MEMORY);
        device.failOn("cuMemUnmap", 1, DeviceException.UNKNOWN);
        PageMapFailure failure = (PageMapFailure) failure(mapper.map(new int[] {4, 5}));
        assertThat(failure.quarantined()).containsExactly(4);
        assertThat(failure.getMessage()).isEqualTo("fake:0 page 5: cuMemCreate failed: CUDA_ERROR_OUT_OF_MEMORY (injected); "
                + "rollback incomplete (page 4: unmap a new handle: cuMemUnmap failed: CUDA_ERROR_UNKNOWN (injected)), "
                + "pages not restored: [4]");
        RankException cause = rankFailure(failure);
        assertThat(cause.rollbackComplete()).isFalse();
        assertThat(cause.unrestoredPages()).containsExactly(4);
        assertThat(mapper.quarantinedPages()).containsExactly(4);
        assertThat(failure(mapper.map(new int[] {4}))).isInstanceOf(IllegalArgumentException.class)
                .hasMessage("fake:0 page 4: already mapped");
        mapper.close();
        assertThat(device.heldHandles()).as("close still gives it back").isZero();
    }

    @Test
    void aFailedUnmapMapsBackWhatItUndid() {
        LocalPageMapper mapper = new LocalPageMapper(device, PER_LAYER);
        ok(mapper.map(new int[] {0, 1}));
        device.failOn("cuMemUnmap", 11, DeviceException.UNKNOWN);
        PageMapFailure failure = (PageMapFailure) failure(mapper.unmap(new int[] {0, 1}));
        assertThat(failure).hasMessageContaining("page 1: cuMemUnmap failed");
        assertThat(failure.quarantined()).isEmpty();
        assertThat(device.mappingCount()).isEqualTo(16);
        for (int range = 0; range < 8; range++) {
            assertThat(device.isAccessible(mapper.tensors().address(0, range))).isTrue();
            assertThat(device.isAccessible(mapper.tensors().address(1, range))).isTrue();
        }
        assertThat(mapper.tensors().mappedPages()).isEqualTo(2);
        ok(mapper.unmap(new int[] {0, 1}));
        assertThat(device.mappingCount()).isZero();
        assertThat(device.heldHandles()).isEqualTo(mapper.handles().idleHandles());
    }

    @Test
    void aHandleThatWillNotReleaseIsKeptAndGivenBackByTheNextUnmap() {
        LocalPageMapper mapper = new LocalPageMapper(device, PAGE_MAJOR);
        ok(mapper.map(new int[] {0, 1}));
        // the first release fails, and so does the retry at the end of the same unmap
        device.failOn("cuMemRelease", 1, DeviceException.UNKNOWN);
        device.failOn("cuMemRelease", 3, DeviceException.UNKNOWN);
        ok(mapper.unmap(new int[] {0, 1}));
        assertThat(device.mappingCount()).isZero();
        assertThat(mapper.tensors().mappedPages()).isZero();
        assertThat(mapper.tensors().unreleasedHandles()).isEqualTo(1);
        assertThat(device.heldHandles()).isEqualTo(1);
        ok(mapper.map(new int[] {3}));
        ok(mapper.unmap(new int[] {3}));
        assertThat(mapper.tensors().unreleasedHandles()).isZero();
        assertThat(device.heldHandles()).isZero();
    }

    @Test
    void aSynchronizeFailureBeforeUnmappingChangesNothing() {
        LocalPageMapper mapper = new LocalPageMapper(device, PAGE_MAJOR);
        ok(mapper.map(new int[] {0}));
        device.failOn("cuCtxSynchronize", 1, DeviceException.ILLEGAL_ADDRESS);
        assertThat(failure(mapper.unmap(new int[] {0}))).hasMessageContaining("cuCtxSynchronize failed");
        assertThat(mapper.tensors().mapped(0)).isTrue();
        assertThat(device.mappingCount()).isEqualTo(1);
    }

    @Test
    void badBatchesAreRefusedBeforeAnyDeviceCall() {
        LocalPageMapper mapper = new LocalPageMapper(device, PAGE_MAJOR);
        ok(mapper.map(new int[] {2}));
        List<String> before = List.copyOf(device.log);
        assertThat(failure(mapper.map(new int[] {3, 2}))).isInstanceOf(IllegalArgumentException.class).hasMessage("fake:0 page 2: already mapped");
        assertThat(failure(mapper.map(new int[] {8}))).hasMessage("fake:0: page 8 is out of range 0..7");
        assertThat(failure(mapper.map(new int[] {-1}))).hasMessage("fake:0: page -1 is out of range 0..7");
        assertThat(failure(mapper.map(new int[] {4, 4}))).hasMessage("fake:0 page 4: listed twice");
        assertThat(failure(mapper.map(null))).isInstanceOf(IllegalArgumentException.class);
        assertThat(failure(mapper.unmap(new int[] {2, 3}))).hasMessage("fake:0 page 3: not mapped");
        ok(mapper.map(new int[0]));
        assertThat(device.log).isEqualTo(before);
    }

    @Test
    void aZeroPageBacksEveryPageIdNotMapped() {
        LocalPageMapper mapper = new LocalPageMapper(device, PAGE_MAJOR, true, NO_IDLE_HANDLES);
        assertThat(device.mappingCount()).isEqualTo(8);
        assertThat(device.heldHandles()).isEqualTo(1);
        ok(mapper.map(new int[] {1, 6}));
        assertThat(device.mappingCount()).isEqualTo(8);
        assertThat(device.heldHandles()).isEqualTo(3);
        ok(mapper.unmap(new int[] {6}));
        assertThat(device.heldHandles()).isEqualTo(2);
        assertThat(device.isAccessible(mapper.tensors().address(6, 0))).as("back on the zero page").isTrue();
        mapper.close();
        assertThat(device.heldHandles()).isZero();
        assertThat(device.mappingCount()).isZero();
    }

    @Test
    void closingGivesEverythingBack() {
        LocalPageMapper mapper = new LocalPageMapper(device, PER_LAYER);
        ok(mapper.map(new int[] {0, 5}));
        ok(mapper.unmap(new int[] {5}));
        mapper.close();
        assertThat(device.heldHandles()).isZero();
        assertThat(device.mappingCount()).isZero();
        assertThat(device.reservedRanges()).isZero();
        assertThat(failure(mapper.map(new int[] {1}))).hasMessageContaining("closed");
        mapper.close();
    }

    @Test
    void theGeometryAndPoolOptionsMustSuitTheDevice() {
        Geometry odd = new Geometry(1, 1, 4096, 3 * MIB, 4, Layout.PAGE_MAJOR);
        assertThatThrownBy(() -> new LocalPageMapper(device, odd)).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("not a multiple of the device granularity");
        assertThatThrownBy(() -> new LocalPageMapper(device, PAGE_MAJOR, false, new HandlePoolOptions(0, 9)))
                .isInstanceOf(IllegalArgumentException.class).hasMessage("handlePool.boundPages 9 is above the group's 8 pages");
        assertThat(device.log).isEmpty();
        device.failOn("cuMemAddressReserve", 3, DeviceException.OUT_OF_MEMORY);
        assertThatThrownBy(() -> new LocalPageMapper(device, PER_LAYER)).isInstanceOfSatisfying(RankException.class,
                e -> assertThat(e.code()).isEqualTo(FailureCode.OUT_OF_MEMORY));
        assertThat(device.reservedRanges()).as("the ranges reserved before are freed").isZero();
    }

    @Test
    void aLedgerOnALocalMapperMapsWhatItHandsOut() {
        FakeDevice small = new FakeDevice(3 * 16 * MIB);
        LocalPageMapper mapper = new LocalPageMapper(small, PAGE_MAJOR);
        PageLedger ledger = new PageLedger(PAGE_MAJOR, mapper, ReserveMarks.fixed(1, 2));
        int perPage = PAGE_MAJOR.blocksPerPage();
        Allocation first = Ledgers.now(ledger.alloc(perPage + 1));
        assertThat(first.isMiss()).isFalse();
        assertThat(mapper.tensors().mappedPages()).isEqualTo(2);
        Allocation tooMuch = Ledgers.now(ledger.alloc(2 * perPage));
        assertThat(tooMuch.missReason()).isEqualTo(MissReason.OUT_OF_MEMORY);
        assertThat(tooMuch.detail()).contains("cuMemCreate failed: CUDA_ERROR_OUT_OF_MEMORY");
        ledger.checkInvariants();
        ledger.free(first.blocks());
        assertThat(Ledgers.now(ledger.releaseReclaimed())).isZero(); // both fit in the reserve
        assertThat(Ledgers.now(ledger.trim())).isEqualTo(2);
        assertThat(small.memoryInfo().usedBytes()).isZero();
        ledger.checkInvariants();
    }
}
