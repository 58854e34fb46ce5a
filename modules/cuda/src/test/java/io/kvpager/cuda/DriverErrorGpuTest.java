package io.kvpager.cuda;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.kvpager.spi.DeviceException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/** What the driver refuses comes back as a DeviceException with the driver's own error name. */
@OnGpu
class DriverErrorGpuTest {

    private final CudaDevice device;

    DriverErrorGpuTest(CudaDevice device) {
        this.device = device;
    }

    @Test
    void mappingFromANonZeroOffsetIntoAHandleIsNotSupported() {
        long g = device.granularity();
        long base = device.reserve(2 * g, 0);
        long handle = device.create(2 * g);
        try {
            DeviceException refused = null;
            try {
                CudaDriver.memMap(base, g, g, handle);
                CudaDriver.memUnmap(base, g); // the driver took it after all: undo, then fail below
            } catch (DeviceException e) {
                refused = e;
            }
            assertThat(refused).as("cuMemMap at offset %d", g).isNotNull();
            assertThat(refused.call()).isEqualTo("cuMemMap");
            assertThat(refused.errorName()).isEqualTo(DeviceException.NOT_SUPPORTED);
            assertThat(refused.getMessage()).contains("from offset " + g);
        } finally {
            device.release(handle);
            device.free(base, 2 * g);
        }
    }

    @Test
    void mappingMoreThanTheHandleHoldsIsTheDriversError() {
        long g = device.granularity();
        long base = device.reserve(2 * g, 0);
        long handle = device.create(g);

        assertThatThrownBy(() -> device.map(base, 2 * g, handle))
                .isInstanceOfSatisfying(DeviceException.class, e -> {
                    assertThat(e.call()).isEqualTo("cuMemMap");
                    assertThat(e.errorName()).startsWith("CUDA_ERROR_");
                    assertThat(e.getMessage()).doesNotContain("refused before");
                });
        assertThat(device.held().mappings()).isZero();

        device.map(base, g, handle); // the failed call left nothing behind
        device.unmap(base, g);
        device.release(handle);
        device.free(base, 2 * g);
    }

    @Test
    void mappingOverAMappedRangeIsTheDriversError() {
        long g = device.granularity();
        long base = device.reserve(g, 0);
        long a = device.create(g);
        long b = device.create(g);
        device.map(base, g, a);

        assertThatThrownBy(() -> device.map(base, g, b))
                .isInstanceOfSatisfying(DeviceException.class, e -> {
                    assertThat(e.call()).isEqualTo("cuMemMap");
                    assertThat(e.getMessage()).doesNotContain("refused before");
                });
        assertThat(device.held().mappings()).isEqualTo(1);

        device.unmap(base, g);
        device.release(a);
        device.release(b);
        device.free(base, g);
    }

    @Test
    void unknownHandlesAndUnmappedMemoryAreRefusedBeforeTheDriver() {
        long g = device.granularity();
        long base = device.reserve(g, 0);
        try {
            assertThatThrownBy(() -> device.map(base, g, 0x1234L))
                    .isInstanceOfSatisfying(DeviceException.class, e -> {
                        assertThat(e.errorName()).isEqualTo(DeviceException.INVALID_VALUE);
                        assertThat(e.getMessage()).contains("refused before");
                    });
            assertThatThrownBy(() -> device.read(base, 16))
                    .isInstanceOfSatisfying(DeviceException.class,
                            e -> assertThat(e.errorName()).isEqualTo(DeviceException.ILLEGAL_ADDRESS));
            long handle = device.create(g);
            device.map(base, g, handle);
            assertThatThrownBy(() -> device.write(base, new byte[] {1}))
                    .isInstanceOfSatisfying(DeviceException.class,
                            e -> assertThat(e.getMessage()).contains("cuMemSetAccess was not called"));
            device.unmap(base, g);
            device.release(handle);
        } finally {
            device.free(base, g);
        }
    }

    @Test
    void anotherThreadMustAttachFirst() throws Exception {
        Throwable failure = CompletableFuture.supplyAsync(() -> {
            try {
                device.memoryInfo();
                return null;
            } catch (Throwable t) {
                return t;
            }
        }, runnable -> new Thread(runnable, "not-the-rank-thread").start()).get(30, TimeUnit.SECONDS);

        assertThat(failure).isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("not-the-rank-thread")
                .hasMessageContaining("attach()");
        assertThat(device.memoryInfo().totalBytes()).isPositive();
    }
}
