package io.kvpager.cache;

import io.kvpager.FailureCode;
import io.kvpager.MissReason;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import org.junit.jupiter.api.Test;

import java.util.List;
import java.util.Map;
import java.util.function.Consumer;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** {@link CacheStats#fromJson} reads back every field {@link CacheStats#toJson} writes, and names a field it cannot read. */
class CacheStatsJsonTest {

    private static final PoolStats POOL = new PoolStats(12, 9, 3, 1, 2, 100, 77, 64, 2, 6, 4242,
            Map.of(MissReason.OUT_OF_MEMORY, 3L, MissReason.LIMIT, 1L), 20, 8, 2L << 20);
    private static final RankStats UP = new RankStats("pp0/tp0", true, null, "sim:h200", 12, 12, 30, 5L << 30, 7L << 30, 12L << 30);
    private static final RankStats DOWN = RankStats.down(new RankFailure("pp0/tp1", FailureCode.STOPPING, "no answer in 5000 ms"));
    private static final GpuStats GPU = new GpuStats("node-a/gpu0", List.of("pp0/tp0", "pp0/tp1"), 140L << 30, 40L << 30,
            24L << 30, 32L << 30, 16L << 30, 5, 300, 1, true);

    @Test
    void readsBackEveryFieldThroughText() {
        CacheStats full = new CacheStats("llama", 3, List.of(0, 1), 2, CacheState.DEGRADED, "pp0/tp1 is down",
                "start timed out", "refill: out of memory", POOL, List.of(UP, DOWN), List.of(GPU));
        CacheStats bare = new CacheStats("llama", 0, List.of(0), 1, CacheState.READY, null, null, POOL, List.of(UP));
        for (CacheStats stats : List.of(full, bare)) {
            // through text, as over a clustered event bus
            assertThat(CacheStats.fromJson(new JsonObject(stats.toJson().encode()))).isEqualTo(stats);
        }
    }

    @Test
    void aReplyWithoutGpusHasNone() {
        JsonObject json = stats().toJson();
        json.remove("gpus");
        assertThat(CacheStats.fromJson(json).gpus()).isEmpty();
    }

    @Test
    void aFailureCodeThisVersionDoesNotKnowReadsAsADriverErrorWithItsMessage() {
        JsonObject json = stats().toJson();
        json.getJsonArray("ranks").getJsonObject(1).getJsonObject("failure").put("code", "SOMETHING_NEWER");
        RankFailure failure = CacheStats.fromJson(json).ranks().get(1).failure();
        assertThat(failure.code()).isEqualTo(FailureCode.DRIVER_ERROR);
        assertThat(failure.message()).isEqualTo("no answer in 5000 ms");
    }

    @Test
    void namesTheFieldAPeerGotWrong() {
        refused(json -> json.getJsonObject("pool").put("mappedPages", "twelve"), "mappedPages");
        refused(json -> json.getJsonObject("pool").getJsonObject("misses").put("BAD_LUCK", 1), "BAD_LUCK");
        refused(json -> json.getJsonArray("ranks").getJsonObject(0).remove("up"), "up");
        refused(json -> json.put("stages", new JsonArray().add("zero")), "stages");
        refused(json -> json.put("group", 1L << 40), "group");
        refused(json -> json.put("state", "sleepy"), "sleepy");
        refused(json -> json.put("gpus", new JsonObject()), "gpus");
        refused(json -> json.getJsonArray("gpus").getJsonObject(0).put("capped", "yes"), "capped");
        refused(json -> json.remove("instance"), "instance");
        refused(json -> json.put("reason", 7), "reason");
    }

    private static CacheStats stats() {
        return new CacheStats("llama", 3, List.of(0, 1), 2, CacheState.DEGRADED, "pp0/tp1 is down", null, null, POOL,
                List.of(UP, DOWN), List.of(GPU));
    }

    private static void refused(Consumer<JsonObject> spoil, String named) {
        JsonObject json = stats().toJson();
        spoil.accept(json);
        assertThatThrownBy(() -> CacheStats.fromJson(json)).isInstanceOf(IllegalArgumentException.class).hasMessageContaining(named);
    }
}
