package io.kvpager.cuda;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.within;

import io.kvpager.spi.DeviceException;
import org.junit.jupiter.api.Test;

/** close() gives back every reservation, handle and mapping a rank still holds. */
@OnGpu
class CloseGpuTest {

    private final CudaDevice observer;

    CloseGpuTest(CudaDevice observer) {
        this.observer = observer;
    }

    @Test
    void closeReleasesEverythingTheDeviceStillHolds() {
        long g = observer.granularity();
        long before = observer.memoryInfo().freeBytes();

        // A second rank on the same GPU shares the primary context; closing it must not end the
        // observer's context.
        CudaDevice rank = Gpu.open("pp0/tp1");
        long compound = 64 * g;
        long range = rank.reserve(4 * compound, 0);
        long mapped = rank.create(compound);
        rank.map(range, compound, mapped);
        rank.setAccess(range, compound);
        rank.fill(range, compound, Gpu.nonZeroByteOtherThan((byte) 0));
        long releasedButMapped = rank.create(compound);
        rank.map(range + compound, compound, releasedButMapped);
        rank.release(releasedButMapped);
        long perLayer = rank.reserve(64 * g, 0);
        for (int i = 0; i < 32; i++) {
            rank.map(perLayer + i * g, g, rank.create(g));
        }
        rank.setAccess(perLayer, 32 * g);
        for (int i = 0; i < 8; i++) {
            rank.create(g); // never mapped
        }
        rank.reserve(g, 0); // never used
        assertThat(rank.held()).isEqualTo(new Holdings.Counts(3, 1 + 32 + 8, 2 + 32));

        observer.attach();
        assertThat(observer.memoryInfo().freeBytes()).isLessThanOrEqualTo(before - (2 * compound + 40 * g));

        rank.close();

        assertThat(rank.held()).isEqualTo(new Holdings.Counts(0, 0, 0));
        observer.attach();
        // Page tables of the mappings may leave a granule or two in the driver's pool; a leaked
        // handle would be at least 2 MiB, the compound ones 128 MiB.
        assertThat(observer.memoryInfo().freeBytes()).isCloseTo(before, within(2 * g));
        assertThatThrownBy(() -> rank.create(g))
                .isInstanceOfSatisfying(DeviceException.class, e -> {
                    assertThat(e.errorName()).isEqualTo(DeviceException.NOT_INITIALIZED);
                    assertThat(e.getMessage()).contains("closed");
                });
        assertThatThrownBy(rank::attach).isInstanceOf(DeviceException.class);
        rank.close(); // a second close does nothing
    }
}
