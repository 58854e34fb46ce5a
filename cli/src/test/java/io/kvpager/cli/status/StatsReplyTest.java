package io.kvpager.cli.status;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.kvpager.LimitResult;
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
    void readsLimitOutcomes() {
        JsonObject json = new JsonObject().put("outcome", "DEFERRED").put("revision", 7).put("limitBytes", 1L << 30)
                .put("effectivePages", 8).put("inUsePages", 10);
        assertThat(StatsReply.limitResult(json)).isEqualTo(new LimitResult(LimitResult.Outcome.DEFERRED, 7, 1L << 30, 8, 10));
    }

    @Test
    void namesTheFieldAPeerGotWrong() {
        JsonObject stats = StatusFixtures.healthy().toJson();
        stats.getJsonObject("pool").put("mappedPages", "twelve");
        assertThatThrownBy(() -> CacheStats.fromJson(stats)).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("mappedPages");
        assertThatThrownBy(() -> StatsReply.limitResult(new JsonObject().put("outcome", "MAYBE")))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("MAYBE");
    }
}
