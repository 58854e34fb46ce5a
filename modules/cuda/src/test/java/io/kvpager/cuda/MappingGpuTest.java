package io.kvpager.cuda;

import static org.assertj.core.api.Assertions.assertThat;

import io.kvpager.Geometry;
import java.util.Arrays;
import org.junit.jupiter.api.Test;

/** Reserve, create, map, set access, copy in and out, unmap and map again, on a real GPU. */
@OnGpu
class MappingGpuTest {

    private final CudaDevice device;

    MappingGpuTest(CudaDevice device) {
        this.device = device;
    }

    @Test
    void granularityIsAPowerOfTwoThatDividesTheDefaultPage() {
        long g = device.granularity();
        assertThat(g).isPositive();
        assertThat(Long.bitCount(g)).isEqualTo(1);
        assertThat(Geometry.DEFAULT_PAGE_BYTES % g).isZero();
    }

    @Test
    void memoryHoldsWhatWasWrittenAcrossUnmapAndRemap() {
        long g = device.granularity();
        int half = (int) (g / 2);
        long base = device.reserve(2 * g, 0);
        long a = device.create(g);
        long b = device.create(g);

        device.map(base, g, a);
        device.setAccess(base, g);
        byte[] pattern = Gpu.randomBytes((int) g);
        device.write(base, pattern);
        Gpu.assertSameBytes(device.read(base, (int) g), pattern, "pattern written to handle a");

        byte fill = Gpu.nonZeroByteOtherThan((byte) 0);
        device.fill(base + half, half, fill);
        byte[] expectedA = pattern.clone();
        Arrays.fill(expectedA, half, (int) g, fill);
        Gpu.assertSameBytes(device.read(base, (int) g), expectedA, "after filling its second half");

        device.unmap(base, g);
        device.map(base, g, b);
        device.setAccess(base, g);
        byte[] other = Gpu.randomBytes((int) g);
        device.write(base, other);
        Gpu.assertSameBytes(device.read(base, (int) g), other, "handle b at the address a had");

        // a's memory kept its contents while unmapped, and shows them at a new address
        device.map(base + g, g, a);
        device.setAccess(base + g, g);
        Gpu.assertSameBytes(device.read(base + g, (int) g), expectedA, "handle a mapped again at a new address");
        Gpu.assertSameBytes(device.read(base, (int) g), other, "handle b unchanged beside it");

        device.unmap(base, g);
        device.unmap(base + g, g);
        device.release(a);
        device.release(b);
        device.free(base, 2 * g);
        assertThat(device.held()).isEqualTo(new Holdings.Counts(0, 0, 0));
    }

    @Test
    void oneSetAccessAndOneCopySpanAdjacentMappings() {
        long g = device.granularity();
        int n = 4;
        long base = device.reserve(n * g, 0);
        long[] handles = new long[n];
        for (int i = 0; i < n; i++) {
            handles[i] = device.create(g);
            device.map(base + i * g, g, handles[i]);
        }
        device.setAccess(base, n * g);
        byte[] pattern = Gpu.randomBytes((int) (n * g));
        device.write(base, pattern);
        device.synchronize();
        Gpu.assertSameBytes(device.read(base, pattern.length), pattern, "one copy across four mappings");

        for (int i = 0; i < n; i++) {
            device.unmap(base + i * g, g);
            device.release(handles[i]);
        }
        device.free(base, n * g);
    }

    @Test
    void releasingAMappedHandleDefersUntilItsUnmap() {
        long g = device.granularity();
        long base = device.reserve(g, 0);
        long handle = device.create(g);
        device.map(base, g, handle);
        device.setAccess(base, g);
        device.release(handle);

        byte[] pattern = Gpu.randomBytes(4096);
        device.write(base, pattern);
        Gpu.assertSameBytes(device.read(base, pattern.length), pattern, "still backed after release");

        device.unmap(base, g);
        device.free(base, g);
        assertThat(device.held()).isEqualTo(new Holdings.Counts(0, 0, 0));
    }
}
