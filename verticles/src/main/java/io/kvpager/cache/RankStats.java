package io.kvpager.cache;

import io.kvpager.FailureCode;
import io.vertx.core.json.JsonObject;

/**
 * One rank's view of a pool, from its worker's {@code stats} answer: the pool's pages mapped
 * there, the driver handles they hold, and the device's memory. A rank that did not answer is
 * reported down, with its failure.
 *
 * @param rank {@code "pp0/tp1"}
 * @param up whether the rank answered
 * @param failure why it did not, or {@code null}
 * @param device the worker's device, e.g. {@code "sim:0 pp0/tp1"}
 * @param mappedPages page ids of this pool mapped on the rank
 * @param handles driver handles of this pool alive on the rank
 * @param handlesAlive driver handles alive on the rank, all pools
 * @param deviceUsedBytes device memory in use
 * @param deviceFreeBytes device memory free
 * @param deviceTotalBytes device memory in all
 */
public record RankStats(String rank, boolean up, RankFailure failure, String device, long mappedPages, long handles,
                        long handlesAlive, long deviceUsedBytes, long deviceFreeBytes, long deviceTotalBytes) {

    /** A rank that did not answer. */
    public static RankStats down(RankFailure failure) {
        return new RankStats(failure.rank(), false, failure, "", 0, 0, 0, 0, 0, 0);
    }

    /**
     * Reads back what {@link #toJson()} wrote. A failure's code that this version does not know
     * reads as {@link FailureCode#DRIVER_ERROR}, its message kept, so a newer peer's failure still shows.
     */
    public static RankStats fromJson(JsonObject json) {
        String rank = StatsJson.string(json, "rank");
        RankFailure failure = null;
        if (json.getValue("failure") != null) {
            JsonObject failureJson = StatsJson.object(json, "failure");
            FailureCode code;
            try {
                code = FailureCode.valueOf(StatsJson.string(failureJson, "code"));
            } catch (IllegalArgumentException e) {
                code = FailureCode.DRIVER_ERROR;
            }
            failure = new RankFailure(rank, code, StatsJson.optionalString(failureJson, "message"));
        }
        return new RankStats(rank, StatsJson.bool(json, "up"), failure, json.getString("device", ""),
                StatsJson.number(json, "mappedPages"), StatsJson.number(json, "handles"), StatsJson.number(json, "handlesAlive"),
                StatsJson.number(json, "deviceUsedBytes"), StatsJson.number(json, "deviceFreeBytes"),
                StatsJson.number(json, "deviceTotalBytes"));
    }

    public JsonObject toJson() {
        JsonObject json = new JsonObject().put("rank", rank).put("up", up);
        if (failure != null) {
            json.put("failure", new JsonObject().put("code", failure.code().name()).put("message", failure.message()));
        }
        return json.put("device", device).put("mappedPages", mappedPages).put("handles", handles)
                .put("handlesAlive", handlesAlive).put("deviceUsedBytes", deviceUsedBytes)
                .put("deviceFreeBytes", deviceFreeBytes).put("deviceTotalBytes", deviceTotalBytes);
    }
}
