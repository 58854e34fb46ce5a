package io.kvpager.sim;

import static io.kvpager.sim.SimDeviceRulesTest.driverError;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;
import static org.awaitility.Awaitility.await;

import io.kvpager.spi.DeviceException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

class FaultInjectionTest {

    static final long G = 2L << 20;
    static final String OOM = DeviceException.OUT_OF_MEMORY;
    static final Duration BOUND = Duration.ofSeconds(10);

    final SimGpu gpu = new SimGpu(256 * G, G);
    final FaultPlan plan = new FaultPlan();
    final SimDevice device = gpu.open("pp0/tp1", LatencyModel.none(), plan);
    final ExecutorService rankThread = Executors.newSingleThreadExecutor();

    @AfterEach
    void close() {
        device.close();
        rankThread.shutdownNow();
    }

    /** Maps a fresh handle of {@code handleBytes} into each slot of {@code range}; the failing pages, in order. */
    List<Integer> mapEach(long range, int pages, long handleBytes) {
        List<Integer> failed = new ArrayList<>();
        for (int p = 0; p < pages; p++) {
            long handle = device.create(handleBytes);
            try {
                device.map(range + p * handleBytes, handleBytes, handle);
            } catch (DeviceException e) {
                assertThat(e.call()).isEqualTo("cuMemMap");
                failed.add(p);
                device.release(handle);
            }
        }
        return failed;
    }

    @Test
    void anInjectedErrorCarriesItsNameAndNumberAndChangesNothing() {
        plan.add(Fault.error(DriverCall.CREATE, OOM));
        plan.add(Fault.error(DriverCall.MAP, "CUDA_ERROR_ECC_UNCORRECTABLE"));
        driverError(() -> device.create(G), "cuMemCreate", OOM, 2);
        assertThat(gpu.bytesInUse()).isZero();
        assertThat(device.handlesAlive()).isZero();

        plan.clear();
        long range = device.reserve(G, 0);
        long handle = device.create(G);
        plan.add(Fault.error(DriverCall.MAP, "CUDA_ERROR_ECC_UNCORRECTABLE"));
        driverError(() -> device.map(range, G, handle), "cuMemMap", "CUDA_ERROR_ECC_UNCORRECTABLE", 214);
        assertThat(device.mappings()).isEmpty();
        plan.add(Fault.error(DriverCall.RELEASE, "CUDA_ERROR_BRAND_NEW"));
        driverError(() -> device.release(handle), "cuMemRelease", "CUDA_ERROR_BRAND_NEW", 999);
        assertThat(device.handlesAlive()).isEqualTo(1);
    }

    @Test
    void everyDriverCallCanBeFailed() {
        long range = device.reserve(4 * G, 0);
        long handle = device.create(G);
        device.map(range, G, handle);
        for (DriverCall call : DriverCall.values()) {
            plan.add(Fault.error(call, "CUDA_ERROR_UNKNOWN"));
        }
        driverError(() -> device.reserve(G, 0), "cuMemAddressReserve", "CUDA_ERROR_UNKNOWN", 999);
        driverError(() -> device.free(range, 4 * G), "cuMemAddressFree", "CUDA_ERROR_UNKNOWN", 999);
        driverError(() -> device.create(G), "cuMemCreate", "CUDA_ERROR_UNKNOWN", 999);
        driverError(() -> device.release(handle), "cuMemRelease", "CUDA_ERROR_UNKNOWN", 999);
        driverError(() -> device.map(range + G, G, handle), "cuMemMap", "CUDA_ERROR_UNKNOWN", 999);
        driverError(() -> device.setAccess(range, G), "cuMemSetAccess", "CUDA_ERROR_UNKNOWN", 999);
        driverError(() -> device.unmap(range, G), "cuMemUnmap", "CUDA_ERROR_UNKNOWN", 999);
        driverError(device::synchronize, "cuCtxSynchronize", "CUDA_ERROR_UNKNOWN", 999);
        for (int i = 0; i < DriverCall.values().length; i++) {
            assertThat(plan.fired(i)).as("fault %d", i).isEqualTo(1);
        }
        assertThat(device.reservations()).hasSize(1);
        assertThat(device.mappings()).containsExactly(new MappedRange(range, G, handle, false));
    }

    @Test
    void aPageFaultHitsThatSlotOfEveryRangeInBothLayouts() {
        plan.add(Fault.error(DriverCall.MAP, OOM).onPage(5));
        // PAGE_MAJOR: one range, one compound handle per page id
        long compound = 4 * G;
        long pageMajor = device.reserve(8 * compound, 0);
        assertThat(mapEach(pageMajor, 8, compound)).containsExactly(5);
        // PER_LAYER: one range per tensor, one handle per tensor and page id
        long layer0 = device.reserve(8 * G, 0);
        long layer1 = device.reserve(8 * G, 0);
        assertThat(mapEach(layer0, 8, G)).containsExactly(5);
        assertThat(mapEach(layer1, 8, G)).containsExactly(5);
        assertThat(plan.fired(0)).isEqualTo(3);
        assertThat(plan.matched(0)).isEqualTo(3);
    }

    @Test
    void pageFaultsAimAtAccessAndUnmapToo() {
        plan.add(Fault.error(DriverCall.ACCESS, "CUDA_ERROR_INVALID_VALUE").onPage(2));
        plan.add(Fault.error(DriverCall.UNMAP, "CUDA_ERROR_UNKNOWN").onPage(3));
        long range = device.reserve(4 * G, 0);
        assertThat(mapEach(range, 4, G)).isEmpty();
        for (int p = 0; p < 4; p++) {
            long address = range + p * G;
            if (p == 2) {
                driverError(() -> device.setAccess(address, G), "cuMemSetAccess", "CUDA_ERROR_INVALID_VALUE", 1);
            } else {
                device.setAccess(address, G);
            }
        }
        for (int p = 0; p < 4; p++) {
            long address = range + p * G;
            if (p == 3) {
                driverError(() -> device.unmap(address, G), "cuMemUnmap", "CUDA_ERROR_UNKNOWN", 999);
            } else {
                device.unmap(address, G);
            }
        }
        assertThat(device.mappings()).extracting(MappedRange::address).containsExactly(range + 3 * G);
    }

    @Test
    void aRankFaultHitsOnlyThatRank() {
        SimOptions options = SimOptions.parse(Map.of(
                "gpuKey", "rank-fault-test",
                "faults", List.of(Map.of("op", "create", "rank", "pp0/tp1", "error", OOM))));
        SimDeviceFactory factory = new SimDeviceFactory();
        SimDevice tp0 = factory.open(0, "pp0/tp0", options);
        SimDevice tp1 = factory.open(0, "pp0/tp1", options);
        try {
            assertThat(tp0.create(G)).isPositive();
            driverError(() -> tp1.create(G), "cuMemCreate", OOM, 2);
            assertThat(tp0.faults()).isNotSameAs(tp1.faults()); // each device counts for itself
            assertThat(tp0.faults().matched(0)).isZero();
            assertThat(tp1.faults().fired(0)).isEqualTo(1);
        } finally {
            tp0.close();
            tp1.close();
            SimGpus.reset("rank-fault-test");
        }
    }

    @Test
    void nthFiresOnceOnTheNthMatchingCall() {
        plan.add(Fault.error(DriverCall.CREATE, OOM).nth(3));
        List<Integer> failed = creates(6);
        assertThat(failed).containsExactly(3);
        assertThat(plan.fired(0)).isEqualTo(1);
        assertThat(plan.matched(0)).isEqualTo(6);
    }

    @Test
    void timesLimitsHowOftenItFires() {
        plan.add(Fault.error(DriverCall.CREATE, OOM).times(2));
        assertThat(creates(5)).containsExactly(1, 2);
        assertThat(plan.fired(0)).isEqualTo(2);
    }

    @Test
    void nthAndTimesFireOnARunOfCalls() {
        plan.add(Fault.error(DriverCall.CREATE, OOM).nth(2).times(3));
        assertThat(creates(7)).containsExactly(2, 3, 4);
    }

    @Test
    void withoutNthOrTimesEveryMatchingCallFails() {
        plan.add(Fault.error(DriverCall.CREATE, OOM));
        assertThat(creates(4)).containsExactly(1, 2, 3, 4);
        assertThat(plan.firedTotal()).isEqualTo(4);
    }

    @Test
    void faultsOnlyCountCallsTheyMatch() {
        plan.add(Fault.error(DriverCall.MAP, OOM).nth(2));
        assertThat(creates(3)).isEmpty();
        assertThat(plan.matched(0)).isZero();
    }

    @Test
    void thePlanChangesWhileTheDeviceRuns() throws Exception {
        assertThat(creates(1)).isEmpty();
        // armed from another thread, seen by the next call
        CompletableFuture.runAsync(() -> plan.add(Fault.error(DriverCall.CREATE, OOM))).get();
        assertThat(creates(2)).containsExactly(1, 2);
        plan.clear();
        assertThat(plan.isEmpty()).isTrue();
        assertThat(creates(2)).isEmpty();
        int index = plan.add(Map.of("op", "cuMemCreate", "nth", 2, "error", OOM));
        assertThat(index).isZero();
        assertThat(creates(3)).containsExactly(2);
    }

    @Test
    void faultsArmedConcurrentlyWithCallsAllCount() throws Exception {
        int adders = 4;
        List<CompletableFuture<Void>> adding = new ArrayList<>();
        try (ExecutorService pool = Executors.newFixedThreadPool(adders)) {
            for (int a = 0; a < adders; a++) {
                adding.add(CompletableFuture.runAsync(() -> {
                    for (int i = 0; i < 50; i++) {
                        plan.add(Fault.delay(DriverCall.SYNCHRONIZE, 1).nth(1_000_000));
                    }
                }, pool));
            }
            for (int i = 0; i < 200; i++) {
                device.synchronize();
            }
            CompletableFuture.allOf(adding.toArray(CompletableFuture[]::new)).get(10, TimeUnit.SECONDS);
        }
        assertThat(plan.faults()).hasSize(adders * 50);
        assertThat(plan.firedTotal()).isZero();
    }

    @Test
    void aDelayLetsTheCallProceed() {
        plan.add(Fault.delay(DriverCall.CREATE, 1).times(1));
        long handle = device.create(G);
        assertThat(device.handlesAlive()).isEqualTo(1);
        assertThat(handle).isPositive();
        assertThat(plan.fired(0)).isEqualTo(1);
        assertThat(plan.delaying()).isZero();
    }

    @Test
    void aDelayWithAnErrorFailsAfterwards() {
        plan.add(Fault.delay(DriverCall.CREATE, 1).withError(OOM));
        driverError(() -> device.create(G), "cuMemCreate", OOM, 2);
    }

    @Test
    void firingFaultsCompose() {
        plan.add(Fault.delay(DriverCall.CREATE, 1));
        plan.add(Fault.error(DriverCall.CREATE, "CUDA_ERROR_TIMEOUT"));
        plan.add(Fault.error(DriverCall.CREATE, OOM));
        driverError(() -> device.create(G), "cuMemCreate", "CUDA_ERROR_TIMEOUT", 909); // the first error in plan order
        assertThat(List.of(plan.fired(0), plan.fired(1), plan.fired(2))).containsExactly(1L, 1L, 1L);
    }

    @Test
    void aLongDelayEndsWhenTheDeviceCloses() throws Exception {
        plan.add(Fault.delay(DriverCall.CREATE, TimeUnit.HOURS.toMillis(1)));
        CompletableFuture<Long> call = CompletableFuture.supplyAsync(() -> device.create(G), rankThread);
        await().atMost(BOUND).until(() -> plan.delaying() == 1);
        device.close();
        ExecutionException e = catchThrowableOfType(ExecutionException.class, () -> call.get(10, TimeUnit.SECONDS));
        assertThat(e.getCause()).isInstanceOfSatisfying(DeviceException.class,
                d -> assertThat(d.errorName()).isEqualTo(DeviceException.NOT_INITIALIZED));
        assertThat(gpu.bytesInUse()).isZero();
    }

    @Test
    void aDelayEndedEarlyLetsTheCallProceed() throws Exception {
        plan.add(Fault.delay(DriverCall.CREATE, TimeUnit.HOURS.toMillis(1)).times(1));
        CompletableFuture<Long> call = CompletableFuture.supplyAsync(() -> device.create(G), rankThread);
        await().atMost(BOUND).until(() -> plan.delaying() == 1);
        assertThat(call).isNotDone();

        plan.releaseDelays();
        long handle = call.get(10, TimeUnit.SECONDS);
        assertThat(plan.delaying()).isZero();
        assertThat(plan.fired(0)).isEqualTo(1);
        device.release(handle);
        assertThat(gpu.bytesInUse()).isZero();
    }

    @Test
    void aHangHoldsTheCallUntilReleasedThenFails() throws Exception {
        plan.add(Fault.hang(DriverCall.MAP).times(1));
        long range = device.reserve(G, 0);
        long handle = device.create(G);
        CompletableFuture<Void> call = CompletableFuture.runAsync(() -> device.map(range, G, handle), rankThread);
        await().atMost(BOUND).until(() -> plan.hanging() == 1);
        assertThat(call).isNotDone();
        assertThat(device.mappingCount()).isZero(); // a hang holds no lock: accounting stays readable

        plan.releaseHangs();
        ExecutionException e = catchThrowableOfType(ExecutionException.class, () -> call.get(10, TimeUnit.SECONDS));
        assertThat(e.getCause()).isInstanceOfSatisfying(DeviceException.class, d -> {
            assertThat(d.call()).isEqualTo("cuMemMap");
            assertThat(d.errorName()).isEqualTo(DeviceException.UNKNOWN);
            assertThat(d.result()).isEqualTo(999);
            assertThat(d).hasMessageContaining("released");
        });
        assertThat(plan.hanging()).isZero();
        assertThat(device.mappings()).isEmpty();
        device.map(range, G, handle); // the fault fired its one time
    }

    @Test
    void aHangEndsWhenTheDeviceClosesAndOtherDevicesOnTheGpuKeepWorking() throws Exception {
        plan.add(Fault.hang(DriverCall.UNMAP).withError("CUDA_ERROR_LAUNCH_TIMEOUT"));
        long range = device.reserve(G, 0);
        device.map(range, G, device.create(G));
        CompletableFuture<Void> call = CompletableFuture.runAsync(() -> device.unmap(range, G), rankThread);
        await().atMost(BOUND).until(() -> plan.hanging() == 1);

        SimDevice neighbour = gpu.open("pp0/tp0");
        long other = neighbour.reserve(G, 0);
        neighbour.map(other, G, neighbour.create(G));
        neighbour.unmap(other, G);
        assertThat(gpu.handlesAlive()).isEqualTo(2);

        device.close();
        ExecutionException e = catchThrowableOfType(ExecutionException.class, () -> call.get(10, TimeUnit.SECONDS));
        assertThat(e.getCause()).isInstanceOfSatisfying(DeviceException.class, d -> {
            assertThat(d.errorName()).isEqualTo("CUDA_ERROR_LAUNCH_TIMEOUT");
            assertThat(d.result()).isEqualTo(702);
            assertThat(d).hasMessageContaining("closed");
        });
        assertThat(gpu.handlesAlive()).isEqualTo(1);
        neighbour.close();
        assertThat(gpu.bytesInUse()).isZero();
    }

    /** Makes {@code n} creates; the 1-based numbers of those that failed. */
    List<Integer> creates(int n) {
        List<Integer> failed = new ArrayList<>();
        for (int i = 1; i <= n; i++) {
            try {
                device.create(G);
            } catch (DeviceException e) {
                failed.add(i);
            }
        }
        return failed;
    }
}
