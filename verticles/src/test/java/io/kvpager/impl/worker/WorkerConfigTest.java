package io.kvpager.impl.worker;

import io.vertx.core.json.JsonObject;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

import java.util.Map;
import java.util.stream.Stream;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.jupiter.params.provider.Arguments.arguments;

class WorkerConfigTest {

    private static JsonObject valid() {
        return new JsonObject().put("instance", "llama-70b_a").put("pp", 1).put("tp", 3).put("device", "sim").put("gpu", 2)
                .put("sim", new JsonObject().put("capacityBytes", 1L << 30)).put("sendTimeoutMs", 2500);
    }

    @Test
    void readsAndWritesJson() {
        WorkerConfig config = new WorkerConfig(valid());
        assertThat(config.instance()).isEqualTo("llama-70b_a");
        assertThat(config.pp()).isEqualTo(1);
        assertThat(config.tp()).isEqualTo(3);
        assertThat(config.device()).isEqualTo("sim");
        assertThat(config.gpu()).isEqualTo(2);
        assertThat(config.sim()).isEqualTo(new JsonObject().put("capacityBytes", 1L << 30));
        assertThat(config.sendTimeoutMs()).isEqualTo(2500L);
        assertThat(config.rank()).isEqualTo("pp1/tp3");
        assertThat(config.address()).isEqualTo("kvpager.llama-70b_a.pp1.tp3");
        assertThat(config.workerPoolName()).isEqualTo("kvpager-gpu2-pp1-tp3");
        assertThat(new WorkerConfig(config.toJson())).isEqualTo(config);
        assertThat(config.toJson()).isEqualTo(valid().put("sendTimeoutMs", 2500L));
    }

    @Test
    void optionalFieldsMayBeLeftOut() {
        WorkerConfig config = new WorkerConfig(valid().put("device", "cuda").put("sim", null).put("sendTimeoutMs", null));
        assertThat(config.sim()).isEmpty();
        assertThat(config.sendTimeoutMs()).isNull();
        assertThat(config.deviceOptions()).isEmpty();
        assertThat(config.toJson().containsKey("sendTimeoutMs")).isFalse();
        assertThat(config.leaseGraceMs()).isEqualTo(WorkerConfig.DEFAULT_LEASE_GRACE_MS);
        assertThat(config.toJson().containsKey("leaseGraceMs")).isFalse();
    }

    @Test
    void theLeaseGraceIsReadAndWritten() {
        WorkerConfig config = new WorkerConfig(valid().put("leaseGraceMs", 0));
        assertThat(config.leaseGraceMs()).isZero();
        assertThat(new WorkerConfig(config.toJson())).isEqualTo(config);
        assertThat(new WorkerConfig(valid().put("leaseGraceMs", 3_600_000)).leaseGraceMs()).isEqualTo(3_600_000);
    }

    @Test
    void simOptionsGoToTheSimFactoryOnly() {
        assertThat(new WorkerConfig(valid()).deviceOptions()).isEqualTo(Map.of("capacityBytes", 1L << 30));
        assertThat(new WorkerConfig(valid().put("device", "cuda")).deviceOptions()).isEmpty();
    }

    @Test
    void theConfigIsCopiedNotShared() {
        JsonObject sim = new JsonObject().put("latency", true);
        WorkerConfig config = new WorkerConfig("a", 0, 0, "sim", 0, sim, null);
        sim.put("latency", false);
        config.sim().put("latency", false);
        assertThat(config.sim().getBoolean("latency")).isTrue();
    }

    static Stream<Arguments> invalid() {
        return Stream.of(
                arguments(valid().put("instance", null), "worker config: instance is required"),
                arguments(valid().put("instance", ""), "worker config: instance must be a non-empty name of letters, digits, '_' and '-', got ''"),
                arguments(valid().put("instance", "a.b"), "worker config: instance must be a non-empty name of letters, digits, '_' and '-', got 'a.b'"),
                arguments(valid().put("instance", 5), "worker config: instance must be a string, got 5 (Integer)"),
                arguments(valid().put("pp", -1), "worker config: pp must be >= 0, got -1"),
                arguments(valid().put("tp", "1"), "worker config: tp must be an integer, got \"1\" (String)"),
                arguments(valid().put("tp", 1.0), "worker config: tp must be an integer, got 1.0 (Double)"),
                arguments(valid().put("pp", 1L << 40), "worker config: pp must be an integer, got 1099511627776 (Long)"),
                arguments(valid().put("device", "rocm"), "worker config: device must be \"sim\" or \"cuda\", got \"rocm\""),
                arguments(valid().put("device", null), "worker config: device is required"),
                arguments(valid().put("gpu", -2), "worker config: gpu must be >= 0, got -2"),
                arguments(valid().put("sim", "fast"), "worker config: sim must be an object, got \"fast\" (String)"),
                arguments(valid().put("sendTimeoutMs", 0), "worker config: sendTimeoutMs must be positive, got 0"),
                arguments(valid().put("leaseGraceMs", -1), "worker config: leaseGraceMs must be in 0..3600000, got -1"),
                arguments(valid().put("leaseGraceMs", 3_600_001), "worker config: leaseGraceMs must be in 0..3600000, got 3600001"),
                arguments(valid().put("leaseGraceMs", "3s"), "worker config: leaseGraceMs must be an integer, got \"3s\" (String)"),
                arguments(valid().put("leaseGraceMs", 1.5), "worker config: leaseGraceMs must be an integer, got 1.5 (Double)"),
                arguments(valid().put("gpuIndex", 0), "worker config: unknown key 'gpuIndex'; known keys: device, gpu, instance, "
                        + "leaseGraceMs, pp, sendTimeoutMs, sim, tp"));
    }

    @ParameterizedTest
    @MethodSource("invalid")
    void refusesInvalidConfigsNamingTheField(JsonObject json, String message) {
        assertThatThrownBy(() -> new WorkerConfig(json)).isInstanceOf(IllegalArgumentException.class).hasMessage(message);
    }
}
