package io.kvpager.cuda;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.kvpager.device.HandlePool;
import io.kvpager.spi.DeviceException;
import io.kvpager.spi.MemoryInfo;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/** A full GPU answers cuMemCreate with CUDA_ERROR_OUT_OF_MEMORY, and failing leaks nothing. */
@OnGpu
class OutOfMemoryGpuTest {

    private final CudaDevice device;

    OutOfMemoryGpuTest(CudaDevice device) {
        this.device = device;
    }

    @Test
    void aCreateLargerThanFreeMemoryIsOutOfMemory() {
        long g = device.granularity();
        MemoryInfo before = device.memoryInfo();
        long tooLarge = (before.freeBytes() / g + 1) * g;

        assertThatThrownBy(() -> device.create(tooLarge))
                .isInstanceOfSatisfying(DeviceException.class, e -> {
                    assertThat(e.isOutOfMemory()).as(e.getMessage()).isTrue();
                    assertThat(e.call()).isEqualTo("cuMemCreate");
                    assertThat(e.result()).isEqualTo(2);
                });
        assertThat(device.memoryInfo().freeBytes()).isEqualTo(before.freeBytes());
        assertThat(device.held().handles()).isZero();
    }

    @Test
    void exhaustingTheGpuEndsInOutOfMemoryAndReleasingGivesItAllBack() {
        long g = device.granularity();
        long before = device.memoryInfo().freeBytes();
        List<Long> handles = new ArrayList<>();
        DeviceException last = null;
        try {
            // Large handles first, then granules, until the driver says no.
            for (long size : new long[] {1L << 30, g}) {
                while (true) {
                    try {
                        handles.add(device.create(size));
                    } catch (DeviceException e) {
                        last = e;
                        break;
                    }
                }
            }
            assertThat(last).isNotNull();
            assertThat(last.isOutOfMemory()).as(last.getMessage()).isTrue();
            assertThat(device.memoryInfo().freeBytes()).isLessThan(before / 100);

            try (HandlePool pool = new HandlePool(device, 4)) {
                assertThatThrownBy(() -> pool.take(g))
                        .isInstanceOfSatisfying(DeviceException.class, e -> assertThat(e.isOutOfMemory()).isTrue());
                assertThat(pool.lent()).isZero();
                assertThat(pool.creates()).isZero();
            }
        } finally {
            handles.forEach(device::release);
        }
        assertThat(device.memoryInfo().freeBytes()).isEqualTo(before);
        assertThat(device.held().handles()).isZero();
    }
}
