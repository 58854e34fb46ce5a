package io.kvpager.sim;

import static org.assertj.core.api.Assertions.assertThat;

import io.kvpager.Allocation;
import io.kvpager.Geometry;
import io.kvpager.Layout;
import io.kvpager.core.LedgerStats;
import io.kvpager.device.LocalPageMapper;
import io.kvpager.core.PageLedger;
import io.kvpager.core.PageMapFailure;
import io.kvpager.core.PageMapper;
import io.kvpager.core.PageState;
import io.kvpager.core.ReserveMarks;
import io.kvpager.device.GroupTensors;
import io.kvpager.device.RankException;
import io.kvpager.spi.DeviceException;
import java.util.ArrayList;
import java.util.BitSet;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.atomic.AtomicInteger;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Combinators;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.Tuple;

/**
 * The page ledger on a {@link LocalPageMapper} (the rank worker's device-side code,
 * {@link GroupTensors} with its handle pool, in the calling thread) over a simulated GPU whose
 * driver calls fail when a random fault plan says so. After every step: the ledger's own
 * invariants hold; no block is held twice; every held block lies in a mapped page; the pages the
 * ledger counts mapped are the ones mapped on the device, each handle where its page lies; the
 * device holds exactly their handles and bytes plus the pool's idle handles and those whose
 * release failed (while nothing is quarantined); and no page was unmapped while a fence that was
 * open when its blocks were freed is still open.
 */
class LedgerOnSimProperties {

    private static final long MIB = 1L << 20;
    private static final AtomicInteger GPUS = new AtomicInteger();
    private static final DriverCall[] FAULTY = {
        DriverCall.CREATE, DriverCall.MAP, DriverCall.ACCESS, DriverCall.UNMAP, DriverCall.RELEASE, DriverCall.SYNCHRONIZE
    };

    record Pool(int pages, int blocksPerPage, int layers, Layout layout, int low, int high, int capacityPages) {
        Geometry geometry() {
            return new Geometry(layers, 2, 2 * MIB / blocksPerPage, 2 * MIB, pages, layout);
        }
    }

    sealed interface Step {}

    record Alloc(int blocks) implements Step {}

    record Free(int which, int count) implements Step {}

    record Limit(int pages) implements Step {}

    record Fence() implements Step {}

    record Retire(int which) implements Step {}

    record Refill() implements Step {}

    record Release() implements Step {}

    record Trim() implements Step {}

    record Fail(int call, int nth, boolean outOfMemory) implements Step {}

    @Provide
    Arbitrary<Pool> pools() {
        return Combinators.combine(Arbitraries.integers().between(1, 8), Arbitraries.of(1, 2, 4, 16),
                Arbitraries.integers().between(1, 3), Arbitraries.of(Layout.values()), Arbitraries.integers().between(0, 2),
                Arbitraries.integers().between(0, 3), Arbitraries.integers().between(1, 10))
                .as((pages, perPage, layers, layout, low, extra, capacity) ->
                        new Pool(pages, perPage, layers, layout, low, low + extra, capacity));
    }

    @Provide
    Arbitrary<List<Step>> steps() {
        Arbitrary<Integer> any = Arbitraries.integers().between(0, 1000);
        Arbitrary<Step> step = Arbitraries.frequencyOf(
                Tuple.of(12, Arbitraries.integers().between(1, 40).map(Alloc::new)),
                Tuple.of(10, Combinators.combine(any, any).as(Free::new)),
                Tuple.of(2, Arbitraries.integers().between(0, 9).map(Limit::new)),
                Tuple.of(3, Arbitraries.just(new Fence())),
                Tuple.of(3, any.map(Retire::new)),
                Tuple.of(3, Arbitraries.just(new Refill())),
                Tuple.of(3, Arbitraries.just(new Release())),
                Tuple.of(1, Arbitraries.just(new Trim())),
                Tuple.of(3, Combinators.combine(Arbitraries.integers().between(0, FAULTY.length - 1),
                        Arbitraries.integers().between(1, 6), Arbitraries.of(true, false)).as(Fail::new)));
        return step.list().ofMinSize(1).ofMaxSize(60);
    }

    @Property(tries = 200)
    void theSimulatedGpuHoldsExactlyWhatTheLedgerCountsMapped(@ForAll("pools") Pool pool, @ForAll("steps") List<Step> steps) {
        Geometry geometry = pool.geometry();
        SimOptions options = new SimOptions(pool.capacityPages() * geometry.bytesPerPageId(), SimOptions.DEFAULT_GRANULARITY,
                false, List.of(), "ledger-properties-" + GPUS.incrementAndGet());
        try (SimDevice device = new SimDeviceFactory().open(0, "pp0/tp0", options)) {
            device.attach();
            new Run(geometry, device, new ReserveMarks(pool.low(), pool.high(), false)).play(steps);
        } finally {
            SimGpus.reset(options.gpuKey());
        }
    }

    /** One engine on one ledger, with what it knows. */
    private static final class Run {
        private final Geometry geometry;
        private final SimDevice device;
        private final LocalPageMapper local;
        private final PageLedger ledger;
        private final List<int[]> unmapCalls = new ArrayList<>();
        private final BitSet held = new BitSet();
        private final List<int[]> allocations = new ArrayList<>();
        private final List<Long> openFences = new ArrayList<>();
        private final List<Set<Long>> fencesAtFree = new ArrayList<>();
        private final List<CompletableFuture<Integer>> pageStages = new ArrayList<>();
        private long revision;

        Run(Geometry geometry, SimDevice device, ReserveMarks marks) {
            this.geometry = geometry;
            this.device = device;
            this.local = new LocalPageMapper(device, geometry);
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
            this.ledger = new PageLedger(geometry, recording, marks);
            for (int page = 0; page < geometry.pages(); page++) {
                fencesAtFree.add(new HashSet<>());
            }
        }

        void play(List<Step> steps) {
            for (Step step : steps) {
                switch (step) {
                    case Alloc a -> alloc(Math.min(a.blocks(), geometry.totalBlocks()));
                    case Free f -> free(f.which(), f.count());
                    case Limit l -> ledger.setLimit(l.pages() * geometry.bytesPerPageId(), revision++);
                    case Fence f -> openFences.add(ledger.fence());
                    case Retire r -> {
                        if (!openFences.isEmpty()) {
                            ledger.retire(openFences.remove(Math.floorMod(r.which(), openFences.size())));
                        }
                    }
                    case Refill r -> pageStages.add(ledger.refill().toCompletableFuture());
                    case Release r -> pageStages.add(ledger.releaseReclaimed().toCompletableFuture());
                    case Trim t -> pageStages.add(ledger.trim().toCompletableFuture());
                    case Fail f -> device.faults().add(new Fault(FAULTY[f.call()], null, Fault.ANY_PAGE, f.nth(), 1,
                            f.outOfMemory() ? DeviceException.OUT_OF_MEMORY : "CUDA_ERROR_UNKNOWN", 0, false));
                }
                check();
            }
            device.faults().clear();
            while (!allocations.isEmpty()) {
                free(0, -1);
            }
            while (!openFences.isEmpty()) {
                ledger.retire(openFences.removeFirst());
            }
            pageStages.add(ledger.trim().toCompletableFuture());
            check();
            LedgerStats stats = ledger.stats();
            assertThat(stats.mappedPages()).isZero();
            assertThat(stats.usedBlocks()).isZero();
            local.close();
            assertThat(device.handlesAlive()).isZero();
            assertThat(device.reservations()).isEmpty();
        }

        private void alloc(int n) {
            int available = ledger.availableBlocks();
            CompletableFuture<Allocation> answer = ledger.alloc(n).toCompletableFuture();
            assertThat(answer).as("a local mapper answers at once").isDone();
            Allocation allocation = answer.join();
            if (n > available) {
                assertThat(allocation.isMiss()).as("alloc(%d) with %d available", n, available).isTrue();
            }
            if (allocation.isMiss()) {
                return;
            }
            for (int block : allocation.blocks()) {
                assertThat(held.get(block)).as("block %d handed out twice", block).isFalse();
                held.set(block);
                assertThat(local.tensors().mapped(geometry.pageOf(block))).as("block %d in an unmapped page", block).isTrue();
            }
            allocations.add(allocation.blocks());
        }

        private void free(int which, int count) {
            if (allocations.isEmpty()) {
                return;
            }
            int index = Math.floorMod(which, allocations.size());
            int[] blocks = allocations.get(index);
            int k = 1 + Math.floorMod(count, blocks.length);
            ledger.free(java.util.Arrays.copyOf(blocks, k));
            for (int i = 0; i < k; i++) {
                held.clear(blocks[i]);
                fencesAtFree.get(geometry.pageOf(blocks[i])).addAll(openFences);
            }
            if (k == blocks.length) {
                allocations.remove(index);
            } else {
                allocations.set(index, java.util.Arrays.copyOfRange(blocks, k, blocks.length));
            }
        }

        private void check() {
            ledger.checkInvariants();
            for (CompletableFuture<Integer> stage : pageStages) {
                assertThat(stage).isDone();
                Throwable failure = stage.handle((v, e) -> e).join();
                if (failure instanceof CompletionException && failure.getCause() != null) {
                    failure = failure.getCause();
                }
                assertThat(failure == null || failure instanceof PageMapFailure && failure.getCause() instanceof RankException r
                        && r.getCause() instanceof DeviceException)
                        .as("unexpected failure %s", failure).isTrue();
            }
            pageStages.clear();
            for (int[] call : unmapCalls) {
                for (int page : call) {
                    for (long fence : fencesAtFree.get(page)) {
                        assertThat(openFences).as("page %d unmapped under fence %d", page, fence).doesNotContain(fence);
                    }
                }
            }
            unmapCalls.clear();
            LedgerStats stats = ledger.stats();
            assertThat(stats.blocksAllocated() - stats.blocksFreed()).isEqualTo(held.cardinality());
            assertThat(stats.usedBlocks()).isEqualTo(held.cardinality());
            GroupTensors tensors = local.tensors();
            int mapped = 0;
            for (int page = 0; page < geometry.pages(); page++) {
                PageState state = ledger.pageState(page);
                if (state == PageState.QUARANTINED) {
                    continue;
                }
                boolean ledgerMapped = state != PageState.FREE;
                assertThat(tensors.mapped(page)).as("page %d is %s", page, state).isEqualTo(ledgerMapped);
                mapped += ledgerMapped ? 1 : 0;
                for (int range = 0; range < geometry.handlesPerPageId(); range++) {
                    long address = tensors.address(page, range);
                    boolean onDevice = device.mappings().stream().anyMatch(m -> m.address() == address);
                    assertThat(onDevice).as("page %d range %d is %s", page, range, state).isEqualTo(ledgerMapped);
                }
            }
            assertThat(stats.mappedPages()).isEqualTo(mapped);
            assertThat(device.handlesAlive()).as("every live handle is a page's, idle or unreleased")
                    .isEqualTo(tensors.handles() + local.handles().idleHandles());
            if (stats.quarantinedPages() == 0) {
                int spare = local.handles().idleHandles() + tensors.unreleasedHandles();
                assertThat(device.handlesAlive()).isEqualTo(mapped * geometry.handlesPerPageId() + spare);
                assertThat(device.mappingCount()).isEqualTo(mapped * geometry.handlesPerPageId());
                assertThat(device.bytesInUse()).isEqualTo(mapped * geometry.bytesPerPageId() + spare * geometry.handleBytes());
            }
        }
    }
}
