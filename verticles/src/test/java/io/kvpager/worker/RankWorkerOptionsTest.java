package io.kvpager.worker;

import io.kvpager.sim.SimOptions;
import io.vertx.core.json.JsonObject;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

import java.util.stream.Stream;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.jupiter.params.provider.Arguments.arguments;

class RankWorkerOptionsTest {

    private static JsonObject valid() {
        return new JsonObject().put("instance", "llama-70b_a").put("pp", 1).put("tp", 3).put("device", "sim").put("gpu", 2)
                .put("sim", new JsonObject().put("capacityBytes", 1L << 30)).put("sendTimeoutMs", 2500);
    }

    @Test
    void readsAndWritesJson() {
        RankWorkerOptions options = new RankWorkerOptions(valid());
        assertThat(options.getInstance()).isEqualTo("llama-70b_a");
        assertThat(options.getPp()).isEqualTo(1);
        assertThat(options.getTp()).isEqualTo(3);
        assertThat(options.getDevice()).isEqualTo("sim");
        assertThat(options.getGpu()).isEqualTo(2);
        assertThat(options.getSim()).isEqualTo(SimOptions.defaults().withCapacityBytes(1L << 30));
        assertThat(options.getSendTimeoutMs()).isEqualTo(2500L);
        assertThat(options.getLeaseGraceMs()).isNull();
        assertThat(new RankWorkerOptions(options.toJson())).isEqualTo(options);
        assertThat(new RankWorkerOptions(options)).isEqualTo(options);
        JsonObject written = options.toJson();
        assertThat(written.getJsonObject("sim").getLong("capacityBytes")).isEqualTo(1L << 30);
        assertThat(written.put("sim", valid().getJsonObject("sim"))).isEqualTo(valid().put("sendTimeoutMs", 2500L));
    }

    @Test
    void fluentSettersBuildTheSameOptions() {
        RankWorkerOptions built = new RankWorkerOptions().setInstance("llama-70b_a").setPp(1).setTp(3).setGpu(2)
                .setSim(SimOptions.defaults().withCapacityBytes(1L << 30)).setSendTimeoutMs(2500L);
        assertThat(built).isEqualTo(new RankWorkerOptions(valid()));
    }

    @Test
    void deviceDefaultsToSimOnGpuZeroAndOptionalFieldsMayBeUnset() {
        RankWorkerOptions options = new RankWorkerOptions(new JsonObject().put("instance", "m").put("pp", 0).put("tp", 0)
                .put("sim", null).put("sendTimeoutMs", null).put("leaseGraceMs", null).put("gpuMemoryPercent", null)).validate();
        assertThat(options.getDevice()).isEqualTo("sim");
        assertThat(options.getGpu()).isZero();
        assertThat(options.getSim()).isEqualTo(SimOptions.defaults());
        assertThat(options.getGpuMemoryPercent()).isNull();
        assertThat(options.toJson().fieldNames()).containsExactlyInAnyOrder("instance", "pp", "tp", "device", "gpu", "sim");
    }

    @Test
    void theGpuMemoryPercentRoundTripsAndDefaultsByDevice() {
        RankWorkerOptions options = new RankWorkerOptions(valid().put("gpuMemoryPercent", 75));
        assertThat(options.getGpuMemoryPercent()).isEqualTo(75);
        assertThat(new RankWorkerOptions(options.toJson())).isEqualTo(options);
        assertThat(new io.kvpager.impl.worker.WorkerConfig(options).gpuMemoryPercent()).isEqualTo(75);
        assertThat(new io.kvpager.impl.worker.WorkerConfig(new RankWorkerOptions(valid())).gpuMemoryPercent()).isEqualTo(100);
        assertThat(new io.kvpager.impl.worker.WorkerConfig(new RankWorkerOptions(valid()).setDevice("cuda")).gpuMemoryPercent())
                .isEqualTo(RankWorkerOptions.DEFAULT_CUDA_GPU_MEMORY_PERCENT);
    }

    @Test
    void theRankIsRequired() {
        assertThatThrownBy(() -> new RankWorkerOptions().setPp(0).setTp(0).validate()).hasMessageStartingWith("instance is required");
        assertThatThrownBy(() -> new RankWorkerOptions().setInstance("m").setTp(0).validate()).hasMessageStartingWith("pp is required");
        assertThatThrownBy(() -> new RankWorkerOptions().setInstance("m").setPp(0).validate()).hasMessageStartingWith("tp is required");
    }

    @Test
    void theSimOptionsAreReadTypedAndRefusedWhenBad() {
        RankWorkerOptions options = new RankWorkerOptions(valid().put("sim", new JsonObject().put("latency", true).put("gpuKey", "k")));
        assertThat(options.getSim()).isEqualTo(SimOptions.defaults().withLatency(true).withGpuKey("k"));
        assertThatThrownBy(() -> new RankWorkerOptions(valid().put("sim", new JsonObject().put("capacity", 5))))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("unknown sim option \"capacity\"");
        assertThatThrownBy(() -> new RankWorkerOptions(valid().put("sim", new JsonObject().put("latency", "yes"))))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("latency must be true or false");
    }

    static Stream<Arguments> invalid() {
        return Stream.of(
                arguments(valid().put("instance", null), "instance is required"),
                arguments(valid().put("instance", ""), "instance must be 1 to 64 letters, digits, '-' or '_' (it is part of event-bus "
                        + "addresses), got ''"),
                arguments(valid().put("instance", "a.b"), "instance must be 1 to 64 letters, digits, '-' or '_' (it is part of "
                        + "event-bus addresses), got 'a.b'"),
                arguments(valid().put("instance", "x".repeat(65)), "instance must be 1 to 64 letters, digits, '-' or '_' (it is part of "
                        + "event-bus addresses), got '" + "x".repeat(65) + "'"),
                arguments(valid().put("instance", 5), "instance must be a string, got 5 (Integer)"),
                arguments(valid().put("pp", -1), "pp must be >= 0, got -1"),
                arguments(valid().put("tp", "1"), "tp must be an integer, got \"1\" (String)"),
                arguments(valid().put("tp", 1.0), "tp must be an integer, got 1.0 (Double)"),
                arguments(valid().put("pp", 1L << 40), "pp must be an integer in the int range, got 1099511627776 (Long)"),
                arguments(valid().put("device", "rocm"), "device must be 'sim' or 'cuda', got 'rocm'"),
                arguments(valid().put("device", null), "device is required"),
                arguments(valid().put("gpu", -2), "gpu must be >= 0, got -2"),
                arguments(valid().put("sim", "fast"), "sim must be a JSON object, got \"fast\" (String)"),
                arguments(valid().put("sendTimeoutMs", 0), "sendTimeoutMs must be >= 1, got 0"),
                arguments(valid().put("leaseGraceMs", -1), "leaseGraceMs must be in 0..3600000, got -1"),
                arguments(valid().put("leaseGraceMs", 3_600_001), "leaseGraceMs must be in 0..3600000, got 3600001"),
                arguments(valid().put("leaseGraceMs", "3s"), "leaseGraceMs must be an integer, got \"3s\" (String)"),
                arguments(valid().put("leaseGraceMs", 1.5), "leaseGraceMs must be an integer, got 1.5 (Double)"),
                arguments(valid().put("gpuMemoryPercent", 0), "gpuMemoryPercent must be in 1..100, got 0"),
                arguments(valid().put("gpuMemoryPercent", 101), "gpuMemoryPercent must be in 1..100, got 101"),
                arguments(valid().put("gpuMemoryPercent", 0.9), "gpuMemoryPercent must be an integer, got 0.9 (Double)"),
                arguments(valid().put("gpuIndex", 0), "unknown worker option 'gpuIndex'; known worker options: instance, pp, tp, "
                        + "device, gpu, sim, sendTimeoutMs, leaseGraceMs, gpuMemoryPercent"));
    }

    @ParameterizedTest
    @MethodSource("invalid")
    void refusesInvalidOptionsNamingTheField(JsonObject json, String message) {
        assertThatThrownBy(() -> new RankWorkerOptions(json)).isInstanceOf(IllegalArgumentException.class).hasMessage(message);
    }

    @Test
    void aRefusedSetterChangesNothing() {
        RankWorkerOptions options = new RankWorkerOptions(valid());
        JsonObject before = options.toJson();
        assertThatThrownBy(() -> options.setInstance("a/b")).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> options.setDevice("tpu")).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> options.setTp(-1)).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> options.setLeaseGraceMs(-1L)).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> options.setSim(null)).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> options.setGpuMemoryPercent(0)).isInstanceOf(IllegalArgumentException.class);
        assertThat(options.toJson()).isEqualTo(before);
    }
}
