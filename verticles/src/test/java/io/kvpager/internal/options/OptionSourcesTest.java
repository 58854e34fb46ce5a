package io.kvpager.internal.options;

import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** How the three layers fold: file, then environment, then system properties. */
class OptionSourcesTest {

    /** Options of the cache's shapes, held in a JSON object: all that folding needs is the keys and their types. */
    private static final OptionTable<JsonObject> TABLE = OptionTable.<JsonObject>of("option", OptionTable.MUST_NOT_BE_NULL)
            .add(row("instance", OptionType.STRING)).add(row("tp", OptionType.INT)).add(row("pp", OptionType.INT))
            .add(row("stages", OptionType.INT_LIST)).add(row("sendTimeoutMs", OptionType.LONG))
            .add(row("zeroPage", OptionType.BOOL)).add(row("lazyStart", OptionType.BOOL)).add(row("sim", OptionType.OBJECT));

    private static <T> Option<JsonObject, T> row(String key, OptionType<T> type) {
        return new Option<>(key, type, json -> json.containsKey(key) ? type.read(key, json.getValue(key)) : null,
                (json, value) -> json.put(key, type.write(value)), null);
    }

    @Test
    void environmentNamesAreUpperSnakeCase() {
        assertThat(OptionSources.envName("tp")).isEqualTo("KVPAGER_TP");
        assertThat(OptionSources.envName("sendTimeoutMs")).isEqualTo("KVPAGER_SEND_TIMEOUT_MS");
        assertThat(OptionSources.envName("kvBuffers")).isEqualTo("KVPAGER_KV_BUFFERS");
        assertThat(OptionSources.propertyName("tp")).isEqualTo("kvpager.tp");
    }

    @Test
    void environmentOverridesTheFileAndSystemPropertiesOverrideBoth() {
        JsonObject file = new JsonObject().put("instance", "f").put("tp", 1).put("pp", 1)
                .put("sim", new JsonObject().put("capacityBytes", 4096));
        JsonObject overrides = new JsonObject()
                .put("KVPAGER_TP", "2").put("KVPAGER_PP", "3").put("KVPAGER_STAGES", "[0, 2]")
                .put("KVPAGER_SIM", "{\"latency\": true}").put("KVPAGER_LAZY_START", "TRUE").put("KVPAGER_INSTANCE", "007")
                .put("kvpager", new JsonObject().put("tp", "4").put("sim", new JsonObject().put("granularity", "4096")));
        JsonObject folded = OptionSources.fold(TABLE, file, overrides);
        assertThat(folded.getInteger("tp")).isEqualTo(4);
        assertThat(folded.getInteger("pp")).isEqualTo(3);
        assertThat(folded.getString("instance")).isEqualTo("007");
        assertThat(folded.getJsonArray("stages")).isEqualTo(new JsonArray().add(0).add(2));
        assertThat(folded.getBoolean("lazyStart")).isTrue();
        assertThat(folded.getJsonObject("sim")).isEqualTo(new JsonObject().put("capacityBytes", 4096)
                .put("latency", true).put("granularity", 4096));
    }

    @Test
    void badOverrideTextNamesItsSource() {
        assertThatThrownBy(() -> OptionSources.fold(TABLE, new JsonObject(), new JsonObject().put("KVPAGER_PP", "two")))
                .hasMessage("KVPAGER_PP (option pp): 'two' is not an integer");
        assertThatThrownBy(() -> OptionSources.fold(TABLE, new JsonObject(),
                new JsonObject().put("kvpager", new JsonObject().put("stagez", "1"))))
                .hasMessageStartingWith("system property kvpager.stagez: unknown option 'stagez'");
        assertThatThrownBy(() -> OptionSources.fold(TABLE, new JsonObject(), new JsonObject().put("KVPAGER_ZERO_PAGE", "yes")))
                .hasMessage("KVPAGER_ZERO_PAGE (option zeroPage): 'yes' is not true or false");
    }
}
