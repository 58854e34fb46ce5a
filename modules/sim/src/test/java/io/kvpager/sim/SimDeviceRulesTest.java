package io.kvpager.sim;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

import io.kvpager.spi.DeviceException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import org.assertj.core.api.ThrowableAssert.ThrowingCallable;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

class SimDeviceRulesTest {

    static final long G = 2L << 20;

    final SimGpu gpu = new SimGpu(64 * G, G);
    final SimDevice device = gpu.open("pp0/tp1");

    @AfterEach
    void close() {
        device.close();
    }

    static DeviceException driverError(ThrowingCallable call, String function, String name, int result) {
        DeviceException e = catchThrowableOfType(DeviceException.class, call);
        assertThat(e).as("expected %s from %s", name, function).isNotNull();
        assertThat(e.call()).isEqualTo(function);
        assertThat(e.errorName()).isEqualTo(name);
        assertThat(e.result()).isEqualTo(result);
        return e;
    }

    static DeviceException invalid(ThrowingCallable call, String function) {
        return driverError(call, function, DeviceException.INVALID_VALUE, 1);
    }

    @Test
    void reserveReturnsAlignedDisjointRanges() {
        long a = device.reserve(4 * G, 0);
        long b = device.reserve(G, 0);
        long c = device.reserve(2 * G, 16 * G);
        assertThat(a % G).isZero();
        assertThat(b % G).isZero();
        assertThat(c % (16 * G)).isZero();
        assertThat(b).isGreaterThanOrEqualTo(a + 4 * G);
        assertThat(c).isGreaterThanOrEqualTo(b + G);
        assertThat(device.reservations()).containsExactly(
                new ReservedRange(a, 4 * G), new ReservedRange(b, G), new ReservedRange(c, 2 * G));
    }

    @Test
    void reserveFillsTheGapAFreeLeaves() {
        long a = device.reserve(4 * G, 0);
        device.reserve(G, 0);
        device.free(a, 4 * G);
        assertThat(device.reserve(2 * G, 0)).isEqualTo(a);
    }

    @Test
    void reserveRejectsSizesAndAlignmentsOffTheGranularity() {
        invalid(() -> device.reserve(G + 4096, 0), "cuMemAddressReserve");
        invalid(() -> device.reserve(0, 0), "cuMemAddressReserve");
        invalid(() -> device.reserve(-G, 0), "cuMemAddressReserve");
        invalid(() -> device.reserve(G, 3 * G), "cuMemAddressReserve");
        invalid(() -> device.reserve(G, -1), "cuMemAddressReserve");
        assertThat(device.reservations()).isEmpty();
    }

    @Test
    void reserveBeyondTheAddressSpaceIsOutOfMemory() {
        driverError(() -> device.reserve(1L << 50, 0), "cuMemAddressReserve", DeviceException.OUT_OF_MEMORY, 2);
        long huge = device.reserve(1L << 44, 0); // 16 TiB of address space costs nothing
        assertThat(device.bytesInUse()).isZero();
        device.free(huge, 1L << 44);
    }

    @Test
    void freeMustMatchAReservationAndHoldNoMappings() {
        long range = device.reserve(4 * G, 0);
        invalid(() -> device.free(range, 2 * G), "cuMemAddressFree");
        invalid(() -> device.free(range + G, 3 * G), "cuMemAddressFree");
        long handle = device.create(G);
        device.map(range + G, G, handle);
        DeviceException e = invalid(() -> device.free(range, 4 * G), "cuMemAddressFree");
        assertThat(e).hasMessageContaining("1 mappings");
        assertThat(device.reservations()).hasSize(1);

        device.unmap(range + G, G);
        device.free(range, 4 * G);
        assertThat(device.reservations()).isEmpty();
        invalid(() -> device.free(range, 4 * G), "cuMemAddressFree");
    }

    @Test
    void createChargesTheGpuAndRunsOutAtCapacity() {
        long first = device.create(60 * G);
        assertThat(device.memoryInfo().freeBytes()).isEqualTo(4 * G);
        long exact = device.create(4 * G);
        DeviceException e = driverError(() -> device.create(G), "cuMemCreate", DeviceException.OUT_OF_MEMORY, 2);
        assertThat(e.isOutOfMemory()).isTrue();
        assertThat(device.handlesAlive()).isEqualTo(2);
        assertThat(gpu.bytesInUse()).isEqualTo(64 * G);

        device.release(exact);
        assertThat(device.create(G)).isNotEqualTo(first);
        assertThat(gpu.bytesInUse()).isEqualTo(61 * G);
        assertThat(gpu.peakBytesInUse()).isEqualTo(64 * G);
    }

    @Test
    void createRejectsSizesOffTheGranularity() {
        invalid(() -> device.create(G / 2), "cuMemCreate");
        invalid(() -> device.create(0), "cuMemCreate");
        invalid(() -> device.create(-G), "cuMemCreate");
        assertThat(gpu.bytesInUse()).isZero();
        assertThat(device.handlesAlive()).isZero();
    }

    @Test
    void releaseOfAnUnknownOrReleasedHandleIsInvalid() {
        long handle = device.create(G);
        device.release(handle);
        invalid(() -> device.release(handle), "cuMemRelease");
        invalid(() -> device.release(12345678L), "cuMemRelease");
    }

    @Test
    void releaseOfAMappedHandleIsDeferredToItsLastUnmap() {
        long range = device.reserve(2 * G, 0);
        long handle = device.create(G);
        device.map(range, G, handle);
        device.map(range + G, G, handle);
        device.release(handle);

        assertThat(device.handlesAlive()).isEqualTo(1);
        assertThat(device.pendingReleases()).isEqualTo(1);
        assertThat(gpu.bytesInUse()).isEqualTo(G);
        invalid(() -> device.map(range, G, handle), "cuMemMap"); // a released handle cannot be mapped again
        invalid(() -> device.release(handle), "cuMemRelease");

        device.unmap(range, G);
        assertThat(gpu.bytesInUse()).isEqualTo(G);
        device.unmap(range + G, G);
        assertThat(device.handlesAlive()).isZero();
        assertThat(device.pendingReleases()).isZero();
        assertThat(gpu.bytesInUse()).isZero();
        assertThat(gpu.handlesAlive()).isZero();
    }

    @Test
    void mapTakesAWholeHandleIntoOneReservedRange() {
        long range = device.reserve(4 * G, 0);
        long small = device.create(G);
        long big = device.create(2 * G);

        invalid(() -> device.map(range, 2 * G, small), "cuMemMap");    // larger than the handle
        invalid(() -> device.map(range, G, big), "cuMemMap");          // part of a handle
        invalid(() -> device.map(range + 4096, G, small), "cuMemMap"); // unaligned
        invalid(() -> device.map(range, G + 4096, small), "cuMemMap"); // size off the granularity
        invalid(() -> device.map(range + 3 * G, 2 * G, big), "cuMemMap"); // runs past the range
        invalid(() -> device.map(range - 2 * G, 2 * G, big), "cuMemMap"); // before it
        invalid(() -> device.map(range, G, 987654321L), "cuMemMap");   // not a handle
        assertThat(device.mappings()).isEmpty();

        device.map(range + 2 * G, 2 * G, big);
        assertThat(device.mappings()).containsExactly(new MappedRange(range + 2 * G, 2 * G, big, false));
        assertThat(device.mappedBytes()).isEqualTo(2 * G);
    }

    @Test
    void aHandleOfAnotherDeviceCannotBeMapped() {
        SimDevice other = gpu.open("pp0/tp0");
        try {
            long foreign = other.create(G);
            long range = device.reserve(G, 0);
            invalid(() -> device.map(range, G, foreign), "cuMemMap");
            invalid(() -> device.release(foreign), "cuMemRelease");
        } finally {
            other.close();
        }
    }

    @Test
    void mappingsMayNotOverlap() {
        long range = device.reserve(8 * G, 0);
        long a = device.create(2 * G);
        long b = device.create(2 * G);
        device.map(range + 2 * G, 2 * G, a);

        invalid(() -> device.map(range + 2 * G, 2 * G, b), "cuMemMap");
        invalid(() -> device.map(range + G, 2 * G, b), "cuMemMap");
        invalid(() -> device.map(range + 3 * G, 2 * G, b), "cuMemMap");
        device.map(range, 2 * G, b);
        device.map(range + 4 * G, 2 * G, b); // the same handle again: zero-page style backing
        assertThat(device.mappingCount()).isEqualTo(3);
    }

    @Test
    void setAccessCoversWholeMappingsOnly() {
        long range = device.reserve(8 * G, 0);
        long a = device.create(2 * G);
        long b = device.create(2 * G);
        invalid(() -> device.setAccess(range, 2 * G), "cuMemSetAccess"); // nothing mapped
        device.map(range, 2 * G, a);
        device.map(range + 2 * G, 2 * G, b);
        device.map(range + 6 * G, 2 * G, a);

        invalid(() -> device.setAccess(range, G), "cuMemSetAccess");           // half a mapping
        invalid(() -> device.setAccess(range + G, 2 * G), "cuMemSetAccess");   // starts inside one
        invalid(() -> device.setAccess(range, 8 * G), "cuMemSetAccess");       // a hole at 4G
        invalid(() -> device.setAccess(range + 4096, 2 * G), "cuMemSetAccess");
        assertThat(device.mappings()).noneMatch(MappedRange::accessible);

        device.setAccess(range, 4 * G); // two contiguous mappings at once
        assertThat(device.mappings()).extracting(MappedRange::accessible).containsExactly(true, true, false);
    }

    @Test
    void unmapMustMatchOneMappingExactly() {
        long range = device.reserve(8 * G, 0);
        long a = device.create(2 * G);
        long b = device.create(2 * G);
        device.map(range, 2 * G, a);
        device.map(range + 2 * G, 2 * G, b);

        invalid(() -> device.unmap(range, G), "cuMemUnmap");
        invalid(() -> device.unmap(range, 4 * G), "cuMemUnmap");
        invalid(() -> device.unmap(range + G, G), "cuMemUnmap");
        invalid(() -> device.unmap(range + 4 * G, 2 * G), "cuMemUnmap");
        assertThat(device.mappingCount()).isEqualTo(2);

        device.unmap(range, 2 * G);
        invalid(() -> device.unmap(range, 2 * G), "cuMemUnmap");
        assertThat(device.mappings()).containsExactly(new MappedRange(range + 2 * G, 2 * G, b, false));
        assertThat(device.handlesAlive()).isEqualTo(2); // unmapping does not release
    }

    @Test
    void aRemappedRangeNeedsAccessAgain() {
        long range = device.reserve(G, 0);
        long handle = device.create(G);
        device.map(range, G, handle);
        device.setAccess(range, G);
        device.unmap(range, G);
        device.map(range, G, handle);
        assertThat(device.mappings()).singleElement().extracting(MappedRange::accessible).isEqualTo(false);
    }

    @Test
    void memoryInfoReportsTheGpu() {
        assertThat(device.memoryInfo().totalBytes()).isEqualTo(64 * G);
        assertThat(device.memoryInfo().freeBytes()).isEqualTo(64 * G);
        device.create(3 * G);
        assertThat(device.memoryInfo().usedBytes()).isEqualTo(3 * G);
        assertThat(device.granularity()).isEqualTo(G);
        assertThat(device.describe()).isEqualTo("sim:standalone/0 pp0/tp1");
    }

    @Test
    void synchronizeSucceedsOnAnOpenDevice() {
        device.synchronize();
        assertThat(device.isClosed()).isFalse();
    }

    @Test
    void closeGivesEverythingBackAndLaterCallsFail() {
        long range = device.reserve(4 * G, 0);
        long mapped = device.create(2 * G);
        long released = device.create(G);
        device.create(G);
        device.map(range, 2 * G, mapped);
        device.map(range + 2 * G, G, released);
        device.release(released);
        device.setAccess(range, 2 * G);
        device.write(range, new byte[] {1, 2, 3});

        device.close();
        device.close(); // idempotent

        assertThat(device.handlesAlive()).isZero();
        assertThat(device.mappings()).isEmpty();
        assertThat(device.reservations()).isEmpty();
        assertThat(device.bytesInUse()).isZero();
        assertThat(device.backingBytes()).isZero();
        assertThat(gpu.bytesInUse()).isZero();
        assertThat(gpu.handlesAlive()).isZero();
        assertThat(gpu.devices()).isEmpty();

        String closed = DeviceException.NOT_INITIALIZED;
        driverError(() -> device.reserve(G, 0), "cuMemAddressReserve", closed, 3);
        driverError(() -> device.free(range, 4 * G), "cuMemAddressFree", closed, 3);
        driverError(() -> device.create(G), "cuMemCreate", closed, 3);
        driverError(() -> device.release(mapped), "cuMemRelease", closed, 3);
        driverError(() -> device.map(range, 2 * G, mapped), "cuMemMap", closed, 3);
        driverError(() -> device.setAccess(range, 2 * G), "cuMemSetAccess", closed, 3);
        driverError(() -> device.unmap(range, 2 * G), "cuMemUnmap", closed, 3);
        driverError(device::synchronize, "cuCtxSynchronize", closed, 3);
        driverError(device::memoryInfo, "cuMemGetInfo", closed, 3);
        driverError(device::granularity, "cuMemGetAllocationGranularity", closed, 3);
        driverError(device::attach, "cuCtxSetCurrent", closed, 3);
        driverError(() -> device.write(range, new byte[1]), "cuMemcpyHtoD", closed, 3);
        driverError(() -> device.read(range, 1), "cuMemcpyDtoH", closed, 3);
        driverError(() -> device.fill(range, 1, (byte) 0), "cuMemsetD8", closed, 3);
    }

    @Test
    void closingOneDeviceLeavesTheOthersMemoryAlone() {
        SimDevice other = gpu.open("pp0/tp0");
        other.create(5 * G);
        device.create(3 * G);
        device.close();
        assertThat(gpu.bytesInUse()).isEqualTo(5 * G);
        assertThat(gpu.devices()).containsExactly(other);
        other.close();
        assertThat(gpu.bytesInUse()).isZero();
    }

    @Test
    void afterAttachOnlyAttachedThreadsMayCall() throws Exception {
        CompletableFuture<Long> before = CompletableFuture.supplyAsync(() -> device.create(G));
        assertThat(before.get()).isPositive(); // no context made current yet: any thread

        device.attach();
        device.create(G);
        CompletableFuture<Long> after = CompletableFuture.supplyAsync(() -> device.create(G));
        ExecutionException e = catchThrowableOfType(ExecutionException.class, after::get);
        assertThat(e.getCause()).isInstanceOfSatisfying(DeviceException.class, d -> {
            assertThat(d.errorName()).isEqualTo("CUDA_ERROR_INVALID_CONTEXT");
            assertThat(d.result()).isEqualTo(201);
            assertThat(d.call()).isEqualTo("cuMemCreate");
        });
        assertThat(device.handlesAlive()).isEqualTo(2);

        // close stays callable from any thread, so a stuck worker can be stopped
        CompletableFuture.runAsync(device::close).get();
        assertThat(device.isClosed()).isTrue();
    }

    @Test
    void aDeviceNeedsARank() {
        assertThatThrownBy(() -> gpu.open(" ")).isInstanceOf(IllegalArgumentException.class).hasMessageContaining("rank");
        assertThatThrownBy(() -> gpu.open(null)).isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void devicesOnOneGpuGetDistinctAddressesAndHandles() {
        SimDevice other = gpu.open("pp0/tp0");
        try {
            assertThat(other.reserve(G, 0)).isNotEqualTo(device.reserve(G, 0));
            assertThat(other.create(G)).isNotEqualTo(device.create(G));
        } finally {
            other.close();
        }
    }
}
