package io.kvpager.impl;

import io.vertx.core.json.JsonObject;
import org.junit.jupiter.api.Test;

import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

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

    @Test
    void refusesWhatItsOptionsRefuseInTheSameWords() {
        assertThatThrownBy(() -> new WorkerConfig(valid().put("instance", "a.b"))).isInstanceOf(IllegalArgumentException.class)
                .hasMessage("instance must be 1 to 64 letters, digits, '-' or '_' (it is part of event-bus addresses), got 'a.b'");
        assertThatThrownBy(() -> new WorkerConfig(new JsonObject().put("pp", 0).put("tp", 0)))
                .isInstanceOf(IllegalArgumentException.class).hasMessageStartingWith("instance is required");
    }
}
