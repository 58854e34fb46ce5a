package io.kvpager.cli.status;

import io.kvpager.cache.CacheState;
import io.kvpager.FailureCode;
import io.kvpager.MissReason;
import io.kvpager.cache.CacheStats;
import io.kvpager.cache.PoolStats;
import io.kvpager.cache.RankFailure;
import io.kvpager.cache.RankStats;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;

/**
 * Reads the coordinator's {@code stats} replies ({@link CacheStats#toJson()}) back into kvpager's
 * types ({@code limit} replies are read by {@link io.kvpager.protocol.CoordinatorReply.Limit}). A field that is missing or of the wrong
 * type is an {@link IllegalArgumentException} naming it, so a peer of another version is reported
 * as such rather than shown as zeros.
 */
public final class StatsReply {

    private StatsReply() {
    }

    public static CacheStats cacheStats(JsonObject json) {
        List<Integer> stages = new ArrayList<>();
        for (Object stage : array(json, "stages")) {
            stages.add(((Number) stage).intValue());
        }
        List<RankStats> ranks = new ArrayList<>();
        for (Object rank : array(json, "ranks")) {
            ranks.add(rankStats((JsonObject) rank));
        }
        return new CacheStats(string(json, "instance"), (int) number(json, "group"), stages, (int) number(json, "tp"),
                CacheState.ofJsonName(string(json, "state")), json.getString("reason"), json.getString("startFailure"), json.getString("refillFailure"),
                poolStats(object(json, "pool")), ranks, List.of());
    }

    private static PoolStats poolStats(JsonObject json) {
        Map<MissReason, Long> misses = new EnumMap<>(MissReason.class);
        JsonObject missJson = object(json, "misses");
        for (String reason : missJson.fieldNames()) {
            try {
                misses.put(MissReason.valueOf(reason), number(missJson, reason));
            } catch (IllegalArgumentException e) {
                throw new IllegalArgumentException("pool.misses has an unknown reason '" + reason + "'");
            }
        }
        return new PoolStats((int) number(json, "mappedPages"), (int) number(json, "inUsePages"), (int) number(json, "reservePages"),
                (int) number(json, "reclaimedPages"), (int) number(json, "quarantinedPages"), (int) number(json, "freePages"),
                number(json, "usedBlocks"), (int) number(json, "limitPages"), (int) number(json, "lowMark"),
                (int) number(json, "highMark"), number(json, "allocs"), misses, number(json, "maps"), number(json, "unmaps"),
                number(json, "bytesPerPage"));
    }

    private static RankStats rankStats(JsonObject json) {
        String rank = string(json, "rank");
        RankFailure failure = null;
        JsonObject failureJson = json.getJsonObject("failure");
        if (failureJson != null) {
            FailureCode code;
            try {
                code = FailureCode.valueOf(string(failureJson, "code"));
            } catch (IllegalArgumentException e) {
                code = FailureCode.DRIVER_ERROR;
            }
            failure = new RankFailure(rank, code, failureJson.getString("message"));
        }
        Boolean up = json.getBoolean("up");
        if (up == null) {
            throw new IllegalArgumentException("ranks[].up is missing");
        }
        return new RankStats(rank, up, failure, json.getString("device", ""), number(json, "mappedPages"), number(json, "handles"),
                number(json, "handlesAlive"), number(json, "deviceUsedBytes"), number(json, "deviceFreeBytes"),
                number(json, "deviceTotalBytes"));
    }

    private static long number(JsonObject json, String key) {
        if (!(json.getValue(key) instanceof Number n)) {
            throw new IllegalArgumentException(key + " must be a number, got " + json.getValue(key));
        }
        return n.longValue();
    }

    private static String string(JsonObject json, String key) {
        if (!(json.getValue(key) instanceof String s)) {
            throw new IllegalArgumentException(key + " must be text, got " + json.getValue(key));
        }
        return s;
    }

    private static JsonObject object(JsonObject json, String key) {
        if (!(json.getValue(key) instanceof JsonObject o)) {
            throw new IllegalArgumentException(key + " must be an object, got " + json.getValue(key));
        }
        return o;
    }

    private static JsonArray array(JsonObject json, String key) {
        if (!(json.getValue(key) instanceof JsonArray a)) {
            throw new IllegalArgumentException(key + " must be a list, got " + json.getValue(key));
        }
        return a;
    }
}
