package io.kvpager.cuda;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import io.kvpager.Geometry;
import io.kvpager.Layout;
import io.kvpager.device.HandlePool;
import java.util.Arrays;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

/**
 * A page id in each layout on a real GPU: one compound handle of {@code pageBytes × 64} for
 * PAGE_MAJOR, 64 handles of {@code pageBytes} from a {@link HandlePool} for PER_LAYER.
 */
@OnGpu
class LayoutGpuTest {

    private static final long BLOCK = 16 * 1024;
    private final CudaDevice device;

    LayoutGpuTest(CudaDevice device) {
        this.device = device;
    }

    @Test
    void pageMajorPageIsOneCompoundHandleWithBlocksInterleavedAcrossLayers() {
        Geometry geometry = new Geometry(32, 2, BLOCK, 2 * Gpu.MIB, 4, Layout.PAGE_MAJOR)
                .requireGranularity(device.granularity());
        long handleBytes = geometry.handleBytes();
        assertThat(handleBytes).isEqualTo(128 * Gpu.MIB);
        long base = device.reserve(geometry.rangeBytes(), 0);
        int[] pages = {0, 2};
        long[] handles = new long[pages.length];
        byte[][] expected = new byte[pages.length][];
        for (int i = 0; i < pages.length; i++) {
            long at = base + pages[i] * handleBytes;
            handles[i] = device.create(handleBytes);
            device.map(at, handleBytes, handles[i]);
            device.setAccess(at, handleBytes);
            byte fill = Gpu.nonZeroByteOtherThan(i == 0 ? 0 : expected[0][0]);
            device.fill(at, handleBytes, fill);
            expected[i] = new byte[(int) handleBytes];
            Arrays.fill(expected[i], fill);
            Gpu.assertSameBytes(device.read(at, (int) handleBytes), expected[i], "page %d filled", pages[i]);
        }

        // A marker at the start of sampled blocks of every (layer, buffer) view.
        long blockStride = geometry.tensors() * BLOCK;
        SplittableRandom random = new SplittableRandom();
        for (int i = 0; i < pages.length; i++) {
            for (int view = 0; view < geometry.tensors(); view++) {
                for (int s = 0; s < 4; s++) {
                    int block = pages[i] * geometry.blocksPerPage() + random.nextInt(geometry.blocksPerPage());
                    long offsetInPage = (block % geometry.blocksPerPage()) * blockStride + view * BLOCK;
                    long address = base + (long) (block / geometry.blocksPerPage()) * handleBytes + offsetInPage;
                    byte[] marker = Gpu.randomBytes(16);
                    device.write(address, marker);
                    System.arraycopy(marker, 0, expected[i], (int) offsetInPage, marker.length);
                }
            }
        }
        for (int i = 0; i < pages.length; i++) {
            long at = base + pages[i] * handleBytes;
            Gpu.assertSameBytes(device.read(at, (int) handleBytes), expected[i], "page %d with its markers", pages[i]);
        }

        for (int i = 0; i < pages.length; i++) {
            device.unmap(base + pages[i] * handleBytes, handleBytes);
            device.release(handles[i]);
        }
        device.free(base, geometry.rangeBytes());
        assertThat(device.held()).isEqualTo(new Holdings.Counts(0, 0, 0));
    }

    @Test
    void perLayerPageMapsPooledHandlesWithoutCreatingAny() {
        Geometry geometry = new Geometry(32, 2, BLOCK, 2 * Gpu.MIB, 4, Layout.PER_LAYER)
                .requireGranularity(device.granularity());
        int tensors = geometry.tensors();
        long pageBytes = geometry.pageBytes();
        int page = 1;
        long freeBefore = device.memoryInfo().freeBytes();

        long[] ranges = new long[tensors];
        for (int t = 0; t < tensors; t++) {
            ranges[t] = device.reserve(geometry.rangeBytes(), 0);
        }
        try (HandlePool pool = new HandlePool(device, tensors)) {
            assertThat(pool.prefill(pageBytes, tensors)).isEqualTo(tensors);
            long creates = pool.creates();

            long[] handles = new long[tensors];
            byte[][] written = new byte[tensors][];
            for (int t = 0; t < tensors; t++) {
                long at = ranges[t] + page * pageBytes;
                handles[t] = pool.take(pageBytes);
                device.map(at, pageBytes, handles[t]);
                device.setAccess(at, pageBytes);
            }
            assertThat(pool.creates()).as("no cuMemCreate while mapping the page").isEqualTo(creates);
            assertThat(device.memoryInfo().freeBytes()).isLessThanOrEqualTo(freeBefore - tensors * pageBytes);

            for (int t = 0; t < tensors; t++) {
                written[t] = Gpu.randomBytes((int) pageBytes);
                device.write(ranges[t] + page * pageBytes, written[t]);
            }
            for (int t = 0; t < tensors; t++) {
                Gpu.assertSameBytes(device.read(ranges[t] + page * pageBytes, (int) pageBytes), written[t], "tensor %d", t);
            }

            for (int t = 0; t < tensors; t++) {
                device.unmap(ranges[t] + page * pageBytes, pageBytes);
                pool.give(handles[t]);
            }
            assertThat(pool.idle()).isEqualTo(tensors);
        }
        for (long range : ranges) {
            device.free(range, geometry.rangeBytes());
        }
        assertThat(device.held()).isEqualTo(new Holdings.Counts(0, 0, 0));
        // Mapping may grow the driver's page-table pool by a granule or two; 64 leaked
        // handles would be 128 MiB.
        assertThat(device.memoryInfo().freeBytes()).isCloseTo(freeBefore, within(2 * device.granularity()));
    }
}
