package io.kvpager.cli.status;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.kvpager.cache.CacheStats;
import io.vertx.core.json.JsonObject;
import org.junit.jupiter.api.Test;

class StatsReplyTest {

    @Test
    void readsBackWhatTheCoordinatorWrites() {
        for (CacheStats stats : new CacheStats[] {StatusFixtures.healthy(), StatusFixtures.oneRankDown()}) {
            // Through text, as over a clustered event bus.
            JsonObject wire = new JsonObject(stats.toJson().encode());
            assertThat(CacheStats.fromJson(wire)).isEqualTo(stats);
        }
    }

    @Test
    void namesTheFieldAPeerGotWrong() {
        JsonObject stats = StatusFixtures.healthy().toJson();
        stats.getJsonObject("pool").put("mappedPages", "twelve");
        assertThatThrownBy(() -> CacheStats.fromJson(stats)).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("mappedPages");
    }
}
