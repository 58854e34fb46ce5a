package io.kvpager.cuda;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.kvpager.spi.Device;
import io.kvpager.spi.DeviceFactory;
import java.util.Arrays;
import java.util.Map;
import java.util.Optional;
import java.util.SplittableRandom;

/**
 * Opening GPU 0 for a test, or skipping the test visibly with the factory's reason when this
 * machine has none. Also fresh random bytes: never test device memory on zeros, which hide
 * unwritten bytes.
 */
final class Gpu {

    static final long MIB = 1L << 20;

    private Gpu() {
    }

    /** GPU 0 as rank {@code rank}, attached to the calling thread; skips the test without a GPU. */
    static CudaDevice open(String rank) {
        DeviceFactory factory = DeviceFactory.forKind("cuda");
        Optional<String> reason = factory.unavailableReason();
        assumeTrue(reason.isEmpty(), () -> "skipped, no CUDA device to test on: " + reason.orElseThrow());
        Device device = factory.open(0, rank, Map.of());
        device.attach();
        warmUp(device);
        return (CudaDevice) device;
    }

    /**
     * One create, map, set-access, unmap and release, so that the driver's one-time bookkeeping
     * (page-table pools) exists before a test measures free memory.
     */
    private static void warmUp(Device device) {
        long g = device.granularity();
        long base = device.reserve(g, 0);
        long handle = device.create(g);
        device.map(base, g, handle);
        device.setAccess(base, g);
        device.unmap(base, g);
        device.release(handle);
        device.free(base, g);
    }

    /**
     * Fails naming the first byte that differs; comparing megabytes with {@code isEqualTo} would
     * print them all.
     */
    static void assertSameBytes(byte[] actual, byte[] expected, String what, Object... args) {
        int at = Arrays.mismatch(actual, expected);
        assertThat(at).as(() -> String.format(what, args) + ": first differing byte of " + expected.length
                + (at < 0 || at >= Math.min(actual.length, expected.length) ? ""
                        : " (read " + actual[at] + ", expected " + expected[at] + ")")).isEqualTo(-1);
    }

    static byte[] randomBytes(int length) {
        byte[] bytes = new byte[length];
        SplittableRandom random = new SplittableRandom();
        for (int i = 0; i < length; i += 8) {
            long v = random.nextLong();
            for (int k = 0; k < 8 && i + k < length; k++) {
                bytes[i + k] = (byte) (v >>> (8 * k));
            }
        }
        return bytes;
    }

    /** A byte other than zero that differs from {@code other}. */
    static byte nonZeroByteOtherThan(byte other) {
        SplittableRandom random = new SplittableRandom();
        byte b;
        do {
            b = (byte) random.nextInt(1, 256);
        } while (b == other);
        return b;
    }
}
