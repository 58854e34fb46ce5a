package io.kvpager.impl.worker;

import io.vertx.core.json.JsonObject;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class GpuIdTest {

    private static WorkerConfig cuda(int gpu) {
        return new WorkerConfig("llama", 0, 1, "cuda", gpu);
    }

    @Test
    void aSimulatedGpuIsNamedByItsKeyIndexAndHost() {
        WorkerConfig config = new WorkerConfig("llama", 0, 1, "sim", 3, new JsonObject().put("gpuKey", "bench"), null);
        assertThat(GpuId.of(config, "host-a", null)).hasToString("sim:bench:3@host-a");
        assertThat(GpuId.of(new WorkerConfig("llama", 0, 1, "sim", 0), "host-a", "5")).hasToString("sim:default:0@host-a");
    }

    @Test
    void aCudaIndexIsTranslatedThroughTheVisibleDevices() {
        assertThat(GpuId.of(cuda(1), "host-a", null)).hasToString("cuda:1@host-a");
        assertThat(GpuId.of(cuda(1), "host-a", " ")).hasToString("cuda:1@host-a");
        assertThat(GpuId.of(cuda(1), "host-a", "2,3")).hasToString("cuda:3@host-a");
        assertThat(GpuId.of(cuda(0), "host-a", "GPU-8f3c2a, GPU-11aa")).hasToString("cuda:GPU-8f3c2a@host-a");
        // an index past the list is the driver's to refuse; it is named as given
        assertThat(GpuId.of(cuda(4), "host-a", "2,3")).hasToString("cuda:4@host-a");
    }

    @Test
    void twoProcessesSeeingOneGpuUnderOtherIndexesNameItAlike() {
        assertThat(GpuId.of(cuda(0), "host-a", "3")).isEqualTo(GpuId.of(cuda(1), "host-a", "2,3"));
        assertThat(GpuId.of(cuda(0), "host-a", "3")).isNotEqualTo(GpuId.of(cuda(0), "host-b", "3"));
    }

    @Test
    void refusesAnIncompleteName() {
        assertThatThrownBy(() -> new GpuId("cuda", "0", " ")).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> new GpuId("cuda", null, "h")).isInstanceOf(IllegalArgumentException.class);
    }
}
