package io.kvpager.attention;

import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.kvpager.spi.DeviceFactory;
import java.util.Optional;

/** Why a GPU test cannot run here: no CUDA device, or no NVRTC to compile the kernel. */
final class OnGpuWithNvrtc {

    private OnGpuWithNvrtc() {
    }

    static Optional<String> unavailableReason() {
        Optional<String> gpu = DeviceFactory.forKind("cuda").unavailableReason();
        if (gpu.isPresent()) {
            return gpu.map(r -> "no CUDA device to test on: " + r);
        }
        return Nvrtc.unavailableReason();
    }

    /** Skips the calling test, visibly and with the reason, where it cannot run. */
    static void assume() {
        Optional<String> reason = unavailableReason();
        assumeTrue(reason.isEmpty(), () -> "skipped, " + reason.orElseThrow());
    }
}
