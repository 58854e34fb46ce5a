package io.kvpager.sim;

import static io.kvpager.sim.SimDeviceRulesTest.driverError;
import static org.assertj.core.api.Assertions.assertThat;

import io.kvpager.spi.DeviceException;
import java.util.Arrays;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

class SimDeviceMemoryTest {

    static final long G = 2L << 20;

    final SimGpu gpu = new SimGpu(64 * G, G);
    final SimDevice device = gpu.open("pp0/tp0");

    @AfterEach
    void close() {
        device.close();
    }

    /** Reserves {@code pages} handle-sized slots and maps a fresh, accessible handle into each. */
    long mapped(int pages, long handleBytes) {
        long range = device.reserve(pages * handleBytes, 0);
        for (int p = 0; p < pages; p++) {
            long handle = device.create(handleBytes);
            device.map(range + p * handleBytes, handleBytes, handle);
        }
        device.setAccess(range, pages * handleBytes);
        return range;
    }

    static byte[] pattern(int length, int seed) {
        byte[] bytes = new byte[length];
        for (int i = 0; i < length; i++) {
            bytes[i] = (byte) (i * 31 + seed);
        }
        return bytes;
    }

    @Test
    void bytesWrittenThroughAMappingReadBack() {
        long range = mapped(1, G);
        byte[] bytes = pattern(1000, 7);
        device.write(range + 12345, bytes);
        assertThat(device.read(range + 12345, 1000)).isEqualTo(bytes);
        assertThat(device.read(range + 12340, 5)).containsOnly(0);
    }

    @Test
    void neverWrittenMemoryReadsAsZero() {
        long range = mapped(1, G);
        assertThat(device.read(range, 200_000)).containsOnly(0);
        assertThat(device.backingBytes()).isZero();
    }

    @Test
    void aCopySpansContiguousMappingsOfDifferentHandles() {
        long range = mapped(2, G);
        byte[] bytes = pattern(300_000, 3);
        device.write(range + G - 100_000, bytes);
        assertThat(device.read(range + G - 100_000, bytes.length)).isEqualTo(bytes);
        assertThat(device.read(range + G, 10)).isEqualTo(Arrays.copyOfRange(bytes, 100_000, 100_010));
    }

    @Test
    void oneHandleMappedTwiceShowsTheSameBytesAtBothAddresses() {
        long range = device.reserve(2 * G, 0);
        long handle = device.create(G);
        device.map(range, G, handle);
        device.map(range + G, G, handle);
        device.setAccess(range, 2 * G);

        device.write(range + 42, pattern(64, 1));
        assertThat(device.read(range + G + 42, 64)).isEqualTo(pattern(64, 1));
        device.fill(range + G, 10, (byte) 9);
        assertThat(device.read(range, 10)).containsOnly(9);
    }

    @Test
    void bytesOutliveAnUnmapWhileTheHandleLives() {
        long range = device.reserve(G, 0);
        long handle = device.create(G);
        device.map(range, G, handle);
        device.setAccess(range, G);
        device.write(range, pattern(16, 5));
        device.unmap(range, G);
        device.map(range, G, handle);
        device.setAccess(range, G);
        assertThat(device.read(range, 16)).isEqualTo(pattern(16, 5));
    }

    @Test
    void aFreshHandleReadsAsZeroAfterAReleasedOneHeldData() {
        long range = device.reserve(G, 0);
        long handle = device.create(G);
        device.map(range, G, handle);
        device.setAccess(range, G);
        device.fill(range, G, (byte) 0x55);
        device.unmap(range, G);
        device.release(handle);
        assertThat(device.backingBytes()).isZero();

        device.map(range, G, device.create(G));
        device.setAccess(range, G);
        assertThat(device.read(range, 4096)).containsOnly(0);
    }

    @Test
    void unmappedAddressesAreIllegal() {
        long range = device.reserve(2 * G, 0);
        String illegal = DeviceException.ILLEGAL_ADDRESS;
        driverError(() -> device.read(range, 1), "cuMemcpyDtoH", illegal, 700);
        driverError(() -> device.write(range, new byte[1]), "cuMemcpyHtoD", illegal, 700);
        driverError(() -> device.fill(range, 1, (byte) 1), "cuMemsetD8", illegal, 700);
        driverError(() -> device.read(12345, 1), "cuMemcpyDtoH", illegal, 700);

        long handle = device.create(G);
        device.map(range, G, handle);
        device.setAccess(range, G);
        device.unmap(range, G);
        driverError(() -> device.read(range, 1), "cuMemcpyDtoH", illegal, 700);
    }

    @Test
    void mappedMemoryWithoutAccessIsIllegal() {
        long range = device.reserve(G, 0);
        device.map(range, G, device.create(G));
        DeviceException e = driverError(() -> device.write(range, new byte[1]), "cuMemcpyHtoD", DeviceException.ILLEGAL_ADDRESS, 700);
        assertThat(e).hasMessageContaining("no access");
    }

    @Test
    void aCopyRunningOffTheMappedMemoryFailsAndWritesNothing() {
        long range = device.reserve(2 * G, 0);
        long handle = device.create(G);
        device.map(range, G, handle);
        device.setAccess(range, G);

        driverError(() -> device.write(range + G - 10, pattern(20, 1)), "cuMemcpyHtoD", DeviceException.ILLEGAL_ADDRESS, 700);
        driverError(() -> device.fill(range + G - 10, 20, (byte) 1), "cuMemsetD8", DeviceException.ILLEGAL_ADDRESS, 700);
        driverError(() -> device.read(range + G - 10, 20), "cuMemcpyDtoH", DeviceException.ILLEGAL_ADDRESS, 700);
        assertThat(device.read(range + G - 10, 10)).containsOnly(0);
        assertThat(device.backingBytes()).isZero();
    }

    @Test
    void negativeLengthsAreInvalid() {
        long range = mapped(1, G);
        driverError(() -> device.read(range, -1), "cuMemcpyDtoH", DeviceException.INVALID_VALUE, 1);
        driverError(() -> device.fill(range, -1, (byte) 0), "cuMemsetD8", DeviceException.INVALID_VALUE, 1);
        driverError(() -> device.write(range, null), "cuMemcpyHtoD", DeviceException.INVALID_VALUE, 1);
        assertThat(device.read(range, 0)).isEmpty();
    }

    @Test
    void fillSetsEveryByteAndZeroFillGivesChunksBack() {
        long range = mapped(1, G);
        device.fill(range + 100, 200_000, (byte) 0x7f);
        byte[] back = device.read(range + 99, 200_002);
        assertThat(back[0]).isZero();
        assertThat(back[back.length - 1]).isZero();
        assertThat(Arrays.copyOfRange(back, 1, back.length - 1)).containsOnly(0x7f);
        assertThat(device.backingBytes()).isEqualTo(4L * SparseBytes.CHUNK);

        device.fill(range, G, (byte) 0);
        assertThat(device.backingBytes()).isZero();
        assertThat(device.read(range + 100, 10)).containsOnly(0);
    }

    @Test
    void backingIsSparseSo100GiBOfMappedHandlesCostTheHostAlmostNothing() {
        SimGpu h200 = new SimGpu(141L << 30, G);
        SimDevice big = h200.open("pp0/tp0");
        try {
            long handleBytes = 128L << 20; // one PAGE_MAJOR page id of 64 tensors × 2 MiB
            int pages = 800;               // 100 GiB
            long range = big.reserve(pages * handleBytes, 0);
            for (int p = 0; p < pages; p++) {
                big.map(range + p * handleBytes, handleBytes, big.create(handleBytes));
            }
            big.setAccess(range, pages * handleBytes);
            for (int p = 0; p < pages; p += 100) {
                big.write(range + p * handleBytes + 4096, pattern(32, p));
            }

            assertThat(big.mappedBytes()).isEqualTo(100L << 30);
            assertThat(h200.bytesInUse()).isEqualTo(100L << 30);
            assertThat(big.memoryInfo().freeBytes()).isEqualTo(41L << 30);
            assertThat(big.backingBytes()).isEqualTo(8L * SparseBytes.CHUNK); // 512 KiB for 100 GiB
            assertThat(big.read(range + 700 * handleBytes + 4096, 32)).isEqualTo(pattern(32, 700));
            assertThat(big.read(range + 701 * handleBytes + 4096, 32)).containsOnly(0);
        } finally {
            big.close();
        }
    }
}
