package io.kvpager;

import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;

import java.util.List;

/**
 * A snapshot of one cache: the pool's figures from the coordinator and each rank's from its
 * worker, so the two can be compared (every rank should map {@code pool.mappedPages()} pages).
 *
 * @param instance the cache's instance name
 * @param group the pool's group
 * @param stages the pp stages the pool spans
 * @param tp ranks per stage
 * @param state {@code starting}, {@code ready}, {@code failed} or {@code closed}
 * @param startFailure why the start failed, or {@code null}
 * @param refillFailure the last background refill or release failure since the last success, or {@code null}
 * @param pool the ledger's figures
 * @param ranks one entry per rank of the pool, stage by stage
 */
public record CacheStats(String instance, int group, List<Integer> stages, int tp, String state, String startFailure,
                         String refillFailure, PoolStats pool, List<RankStats> ranks) {

    public CacheStats {
        stages = List.copyOf(stages);
        ranks = List.copyOf(ranks);
    }

    /** Whether every rank answered. */
    public boolean healthy() {
        for (RankStats r : ranks) {
            if (!r.up()) {
                return false;
            }
        }
        return true;
    }

    /** The figures of {@code rank} ({@code "pp0/tp1"}), or {@code null}. */
    public RankStats rank(String rank) {
        for (RankStats r : ranks) {
            if (r.rank().equals(rank)) {
                return r;
            }
        }
        return null;
    }

    public JsonObject toJson() {
        JsonArray rankJson = new JsonArray();
        for (RankStats r : ranks) {
            rankJson.add(r.toJson());
        }
        JsonObject json = new JsonObject().put("instance", instance).put("group", group)
                .put("stages", new JsonArray(new java.util.ArrayList<>(stages))).put("tp", tp).put("state", state);
        if (startFailure != null) {
            json.put("startFailure", startFailure);
        }
        if (refillFailure != null) {
            json.put("refillFailure", refillFailure);
        }
        return json.put("pool", pool.toJson()).put("ranks", rankJson);
    }
}
