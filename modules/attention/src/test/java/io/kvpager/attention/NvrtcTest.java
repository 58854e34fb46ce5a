package io.kvpager.attention;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.util.List;
import org.junit.jupiter.api.Test;

class NvrtcTest {

    @Test
    void withoutNvrtcEveryCompileFailsWithOneClearMessage() {
        assumeTrue(Nvrtc.unavailableReason().isPresent(), "NVRTC is installed here: the missing-library path is not reachable");
        String reason = Nvrtc.unavailableReason().orElseThrow();
        assertThat(reason).startsWith("NVRTC not found").contains("libnvrtc.so.13", "KVPAGER_NVRTC");
        assertThatThrownBy(() -> Nvrtc.compile("extern \"C\" __global__ void k() {}", "k.cu", List.of("--gpu-architecture=sm_90")))
                .isInstanceOf(IllegalStateException.class).hasMessage(reason);
    }

    @Test
    void withNvrtcTheKernelCompilesAndBadSourceReportsTheLog() {
        assumeTrue(Nvrtc.unavailableReason().isEmpty(), () -> "skipped, " + Nvrtc.unavailableReason().orElseThrow());
        byte[] cubin = Nvrtc.compile(KernelCache.source(), KernelCache.SOURCE, List.of("--gpu-architecture=sm_90", "-std=c++17"));
        assertThat(cubin).isNotEmpty();
        assertThatThrownBy(() -> Nvrtc.compile("__global__ void k() { nope; }", "bad.cu", List.of("--gpu-architecture=sm_90")))
                .isInstanceOf(NvrtcException.class).hasMessageContaining("bad.cu").hasMessageContaining("nope");
    }
}
