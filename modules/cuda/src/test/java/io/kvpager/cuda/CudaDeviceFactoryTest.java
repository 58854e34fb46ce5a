package io.kvpager.cuda;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.kvpager.spi.DeviceException;
import io.kvpager.spi.DeviceFactory;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.Test;

/** Runs everywhere: on a machine without a GPU the factory must load, explain and refuse. */
class CudaDeviceFactoryTest {

    private final DeviceFactory factory = DeviceFactory.forKind("cuda");

    @Test
    void isFoundByKind() {
        assertThat(factory).isInstanceOf(CudaDeviceFactory.class);
        assertThat(factory.kind()).isEqualTo("cuda");
    }

    @Test
    void badArgumentsAreRefusedOnAnyMachine() {
        assertThatThrownBy(() -> factory.open(0, "pp0/tp0", Map.of("capacityBytes", 1L, "faults", 2)))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("[capacityBytes, faults]");
        assertThatThrownBy(() -> factory.open(-1, "pp0/tp0", Map.of()))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("-1");
        assertThatThrownBy(() -> factory.open(0, " ", Map.of()))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("rank");
    }

    @Test
    void withoutTheDriverOpenFailsWithTheReasonItReports() {
        Optional<String> reason = factory.unavailableReason();
        assumeTrue(reason.isPresent(), "this machine has a CUDA device; the refusal path is not reachable here");

        assertThat(reason.get()).matches("(libcuda\\.so\\.1 not found: |no CUDA device: |libcuda\\.so\\.1 lacks ).*");
        assertThatThrownBy(() -> factory.open(0, "pp0/tp0", Map.of()))
                .isInstanceOf(IllegalStateException.class)
                .hasMessage(reason.get());
        assertThat(factory.unavailableReason()).isEqualTo(reason);
    }

    @Test
    void withoutTheLibraryEveryEntryPointFailsAsADeviceException() {
        Optional<String> reason = CudaDriver.unavailableReason();
        assumeTrue(reason.isPresent() && reason.get().startsWith("libcuda.so.1 not found"),
                "libcuda.so.1 is present here");

        assertThatThrownBy(CudaDriver::init)
                .isInstanceOfSatisfying(DeviceException.class, e -> {
                    assertThat(e.call()).isEqualTo("cuInit");
                    assertThat(e.errorName()).isEqualTo(DeviceException.NOT_INITIALIZED);
                    assertThat(e.getMessage()).contains("libcuda.so.1 not found");
                });
        assertThat(CudaDriver.errorName(2)).isEqualTo("CUresult 2");
    }
}
