package io.kvpager.cache;

import io.vertx.core.json.JsonObject;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** The sharing policy's options: a guarantee in bytes or percent, the reclaim deadline. */
class SharingOptionsTest {

    private static KvCacheOptions valid() {
        return new KvCacheOptions().setInstance("llama").setLayers(32).setBlockBytes(16 << 10).setPages(64);
    }

    @Test
    void defaultsAreNoGuaranteeSetAndAQuarterSecondToGiveBack() {
        KvCacheOptions o = valid().validate();
        assertThat(o.getGuaranteeBytes()).isNull();
        assertThat(o.getGuaranteePercent()).isNull();
        assertThat(o.getReclaimDeadlineMs()).isEqualTo(KvCacheOptions.DEFAULT_RECLAIM_DEADLINE_MS).isEqualTo(250);
        assertThat(o.toJson().containsKey("guaranteeBytes")).isFalse();
        assertThat(o.toJson().getLong("reclaimDeadlineMs")).isEqualTo(250);
    }

    @Test
    void jsonRoundTripKeepsTheSharingFields() {
        KvCacheOptions bytes = valid().setGuaranteeBytes(3L << 30).setReclaimDeadlineMs(250);
        assertThat(new KvCacheOptions(bytes.toJson()).toJson()).isEqualTo(bytes.toJson());
        assertThat(new KvCacheOptions(bytes.toJson()).getGuaranteeBytes()).isEqualTo(3L << 30);
        KvCacheOptions percent = valid().setGuaranteePercent(0);
        assertThat(new KvCacheOptions(percent.toJson()).getGuaranteePercent()).isZero();
        assertThat(new KvCacheOptions(new JsonObject().put("guaranteePercent", 40).putNull("guaranteePercent"))
                .getGuaranteePercent()).isNull();
    }

    @ParameterizedTest
    @CsvSource(delimiter = '|', value = {
            "{\"guaranteeBytes\": -1}|guaranteeBytes must be >= 0, got -1",
            "{\"guaranteeBytes\": 1.5}|guaranteeBytes must be",
            "{\"guaranteePercent\": 101}|guaranteePercent must be in 0..100, got 101",
            "{\"guaranteePercent\": -1}|guaranteePercent must be in 0..100, got -1",
            "{\"guaranteePercent\": \"50\"}|guaranteePercent must be an integer",
            "{\"guaranteeBytes\": 5, \"guaranteePercent\": 10}|set at most one of them",
            "{\"reclaimDeadlineMs\": 0}|reclaimDeadlineMs must be in 1..3600000, got 0",
            "{\"reclaimDeadlineMs\": null}|reclaimDeadlineMs must not be null",
    })
    void badValuesAreRefusedNamingTheField(String json, String message) {
        assertThatThrownBy(() -> new KvCacheOptions(new JsonObject(json)))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining(message);
    }

    @Test
    void aRefusedValueChangesNothing() {
        KvCacheOptions o = valid().setGuaranteePercent(30).setReclaimDeadlineMs(400);
        JsonObject before = o.toJson();
        assertThatThrownBy(() -> o.setGuaranteeBytes(1L << 20)).hasMessageContaining("guaranteeBytes (1048576) and guaranteePercent (30)");
        assertThatThrownBy(() -> o.setGuaranteePercent(120)).hasMessageContaining("guaranteePercent must be in 0..100");
        assertThatThrownBy(() -> o.setReclaimDeadlineMs(-3)).hasMessageContaining("reclaimDeadlineMs");
        assertThat(o.toJson()).isEqualTo(before);
        // unsetting one lets the other be set
        assertThat(o.setGuaranteePercent(null).setGuaranteeBytes(1L << 20).getGuaranteeBytes()).isEqualTo(1L << 20);
    }

    @Test
    void aReclaimIsCheckedAndReadsBackFromJson() {
        Reclaim r = new Reclaim(12, 500, "gpu g: cache b is below its guarantee");
        assertThat(Reclaim.fromJson(r.toJson())).isEqualTo(r);
        assertThat(r.toJson().encode()).isEqualTo("{\"blocks\":12,\"deadlineMs\":500,\"reason\":\"gpu g: cache b is below its guarantee\"}");
        assertThat(Reclaim.address("model-7b")).isEqualTo("kvpager.model-7b.reclaim");
        assertThatThrownBy(() -> new Reclaim(0, 5, "x")).hasMessageContaining("at least 1 block");
        assertThatThrownBy(() -> Reclaim.fromJson(new JsonObject().put("blocks", 3))).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("not a reclaim");
    }
}
