package io.kvpager.core;

import static org.assertj.core.api.Assertions.assertThat;

import io.kvpager.Geometry;
import io.kvpager.Layout;
import io.kvpager.device.FakeDevice;
import io.kvpager.device.GroupTensors;
import io.kvpager.device.HandlePoolOptions;
import io.kvpager.device.LocalPageMapper;
import io.kvpager.device.RankException;
import io.kvpager.spi.DeviceException;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletionStage;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Combinators;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.Tuple;

/**
 * Random engines against a ledger on a {@link LocalPageMapper} (the rank worker's device-side
 * code, {@link GroupTensors} with its handle pool, in the calling thread) over a device that keeps
 * the driver's rules and fails scripted calls: besides everything {@link LedgerModel} checks, the
 * device must hold exactly the handles of the pages the ledger counts mapped, each mapped where
 * its page lies and open for access, plus the idle handles of the pool and those whose release
 * failed, to be given back later; with a zero page, every page id not mapped reads the one zero
 * handle.
 */
class LocalLedgerProperties {

    private static final long MIB = 1L << 20;
    private static final String[] CALLS = {"cuMemCreate", "cuMemMap", "cuMemSetAccess", "cuMemUnmap", "cuMemRelease", "cuCtxSynchronize"};

    record Pool(int pages, int blocksPerPage, int layers, Layout layout, int low, int high, Rank rank) {
        Geometry geometry() {
            return new Geometry(layers, 2, 2 * MIB / blocksPerPage, 2 * MIB, pages, layout);
        }

        HandlePoolOptions poolOptions() {
            return new HandlePoolOptions(0, Math.min(rank.boundPages(), pages));
        }
    }

    /** What the rank's tensors are made with, and how much memory its device has. */
    record Rank(boolean tight, boolean zeroPage, int boundPages) {}

    sealed interface Step {}

    record Alloc(int blocks) implements Step {}

    record Free(int which, int count) implements Step {}

    record Limit(int pages, int revisionStep) implements Step {}

    record Fence() implements Step {}

    record Retire(int which) implements Step {}

    record Refill() implements Step {}

    record Release() implements Step {}

    record Trim() implements Step {}

    /** Call {@code CALLS[call]} fails its {@code nth} time from now, out of memory or otherwise. */
    record Fault(int call, int nth, boolean outOfMemory) implements Step {}

    @Provide
    Arbitrary<Pool> pools() {
        return Combinators.combine(Arbitraries.integers().between(1, 8), Arbitraries.of(1, 2, 4), Arbitraries.integers().between(1, 2),
                Arbitraries.of(Layout.values()), Arbitraries.integers().between(0, 2), Arbitraries.integers().between(0, 3),
                Combinators.combine(Arbitraries.of(true, false), Arbitraries.of(true, false), Arbitraries.integers().between(0, 3)).as(Rank::new))
                .as((pages, perPage, layers, layout, low, extra, rank) -> new Pool(pages, perPage, layers, layout, low, low + extra, rank));
    }

    @Provide
    Arbitrary<List<Step>> steps() {
        Arbitrary<Integer> any = Arbitraries.integers().between(0, 1000);
        Arbitrary<Step> step = Arbitraries.frequencyOf(
                Tuple.of(12, Arbitraries.integers().between(1, 12).map(Alloc::new)),
                Tuple.of(10, Combinators.combine(any, any).as(Free::new)),
                Tuple.of(2, Combinators.combine(Arbitraries.integers().between(0, 9), Arbitraries.integers().between(-1, 2))
                        .as(Limit::new)),
                Tuple.of(3, Arbitraries.just(new Fence())),
                Tuple.of(3, any.map(Retire::new)),
                Tuple.of(3, Arbitraries.just(new Refill())),
                Tuple.of(3, Arbitraries.just(new Release())),
                Tuple.of(1, Arbitraries.just(new Trim())),
                Tuple.of(3, Combinators.combine(Arbitraries.integers().between(0, CALLS.length - 1),
                        Arbitraries.integers().between(1, 6), Arbitraries.of(true, false)).as(Fault::new)));
        return step.list().ofMinSize(1).ofMaxSize(60);
    }

    @Property(tries = 250)
    void theDeviceHoldsExactlyWhatTheLedgerCountsMapped(@ForAll("pools") Pool pool, @ForAll("steps") List<Step> steps) {
        Geometry geometry = pool.geometry();
        // A tight device holds about half the pool; an ample one all of it, and the zero page.
        boolean tight = pool.rank().tight();
        boolean zeroPage = pool.rank().zeroPage();
        long capacity = tight ? Math.max(1, pool.pages() / 2) * geometry.bytesPerPageId()
                : geometry.pages() * geometry.bytesPerPageId() + (zeroPage ? geometry.handleBytes() : 0);
        FakeDevice device = new FakeDevice(capacity);
        LocalPageMapper local = new LocalPageMapper(device, geometry, zeroPage, pool.poolOptions());
        List<int[]> unmapCalls = new ArrayList<>();
        PageMapper recording = new PageMapper() {
            @Override
            public CompletionStage<Void> map(int[] pages) {
                return local.map(pages);
            }

            @Override
            public CompletionStage<Void> unmap(int[] pages) {
                unmapCalls.add(pages.clone());
                return local.unmap(pages);
            }
        };
        PageLedger ledger = new PageLedger(geometry, recording, new ReserveMarks(pool.low(), pool.high(), false));
        LedgerModel model = new LedgerModel(ledger, new LedgerModel.MapperView() {
            @Override
            public boolean mapped(int page) {
                return local.tensors().mapped(page);
            }

            @Override
            public boolean lost(int page) {
                for (int lost : local.quarantinedPages()) {
                    if (lost == page) {
                        return true;
                    }
                }
                return false;
            }

            @Override
            public List<int[]> unmapCalls() {
                return unmapCalls;
            }
        }, failure -> failure instanceof PageMapFailure f && f.getCause() instanceof RankException r
                && r.getCause() instanceof DeviceException);
        for (Step step : steps) {
            switch (step) {
                // a handle whose release failed holds memory until an unmap gives it back
                case Alloc a -> model.alloc(a.blocks(), !tight && !device.faultsPending()
                        && local.tensors().unreleasedHandles() == 0);
                case Free f -> model.free(f.which(), f.count());
                case Limit l -> model.setLimit(l.pages(), l.revisionStep());
                case Fence f -> model.fence();
                case Retire r -> model.retire(r.which());
                case Refill r -> model.refill();
                case Release r -> model.releaseReclaimed();
                case Trim t -> model.trim();
                case Fault f -> device.failOn(CALLS[f.call()], f.nth(),
                        f.outOfMemory() ? DeviceException.OUT_OF_MEMORY : DeviceException.UNKNOWN);
            }
            model.check();
            checkDevice(device, local, ledger, zeroPage);
        }
        device.forgetFaults();
        model.drain();
        checkDevice(device, local, ledger, zeroPage);
        local.close();
        assertThat(device.heldHandles()).isZero();
        assertThat(device.reservedRanges()).isZero();
    }

    private static void checkDevice(FakeDevice device, LocalPageMapper local, PageLedger ledger, boolean zeroPage) {
        Geometry geometry = ledger.geometry();
        GroupTensors tensors = local.tensors();
        Set<Long> pageHandles = new HashSet<>();
        Set<Long> zeroHandles = new HashSet<>();
        int known = 0;
        for (int page = 0; page < geometry.pages(); page++) {
            if (ledger.pageState(page) == PageState.QUARANTINED) {
                continue;
            }
            boolean mapped = tensors.mapped(page);
            known += mapped ? 1 : 0;
            for (int range = 0; range < geometry.handlesPerPageId(); range++) {
                long address = tensors.address(page, range);
                assertThat(device.isMappedAt(address)).as("page %d range %d", page, range).isEqualTo(mapped || zeroPage);
                assertThat(device.isAccessible(address)).as("page %d range %d", page, range).isEqualTo(mapped || zeroPage);
                (mapped ? pageHandles : zeroHandles).add(device.handleAt(address));
            }
        }
        assertThat(pageHandles).as("one handle per range of each mapped page").hasSize(known * geometry.handlesPerPageId());
        assertThat(zeroHandles).as("the one zero page").hasSizeLessThanOrEqualTo(1).noneMatch(pageHandles::contains);
        assertThat(device.heldHandles()).as("every handle the device holds is a page's, the zero page, idle or unreleased")
                .isEqualTo(tensors.handles() + local.handles().idleHandles());
        if (ledger.stats().quarantinedPages() == 0) {
            int handles = known * geometry.handlesPerPageId();
            int spare = local.handles().idleHandles() + tensors.unreleasedHandles() + (zeroPage ? 1 : 0);
            assertThat(device.mappingCount()).isEqualTo(zeroPage ? geometry.pages() * geometry.handlesPerPageId() : handles);
            assertThat(device.heldHandles()).isEqualTo(handles + spare);
            assertThat(device.memoryInfo().usedBytes()).isEqualTo(known * geometry.bytesPerPageId() + spare * geometry.handleBytes());
        }
    }
}
