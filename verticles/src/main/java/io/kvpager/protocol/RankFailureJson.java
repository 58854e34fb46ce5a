package io.kvpager.protocol;

import io.kvpager.FailureCode;
import io.kvpager.cache.RankFailure;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;

import java.util.ArrayList;
import java.util.List;

/**
 * A rank failure's fields on the wire:
 * {@code {"code": "DRIVER_ERROR", "rank": "pp0/tp1", "group": 7, "page": 5, "driverError": "CUDA_ERROR_UNKNOWN",
 * "rollbackComplete": false, "unrestoredPages": [5], "message": "pp0/tp1 group 7 page 5: ..."}}.
 * {@code group} and {@code page} are -1 when the failure concerns neither; {@code driverError} is
 * left out when no driver call failed.
 */
public final class RankFailureJson {

    public static final String CODE = "code";
    public static final String RANK = "rank";
    public static final String GROUP = "group";
    public static final String PAGE = "page";
    public static final String DRIVER_ERROR = "driverError";
    public static final String ROLLBACK_COMPLETE = "rollbackComplete";
    public static final String UNRESTORED_PAGES = "unrestoredPages";
    public static final String MESSAGE = "message";

    private RankFailureJson() {
    }

    public static JsonObject toJson(RankFailure failure) {
        JsonObject json = new JsonObject().put(CODE, failure.code().name()).put(RANK, failure.rank())
                .put(GROUP, failure.group()).put(PAGE, failure.page());
        if (failure.driverError() != null) {
            json.put(DRIVER_ERROR, failure.driverError());
        }
        return json.put(ROLLBACK_COMPLETE, failure.rollbackComplete())
                .put(UNRESTORED_PAGES, new JsonArray(new ArrayList<>(failure.unrestoredPages())))
                .put(MESSAGE, failure.message());
    }

    /** Reads the fields strictly: every one but {@code driverError} is required, and no other is taken. */
    public static RankFailure fromJson(JsonObject json) {
        RequestBody body = new RequestBody(json);
        body.requireOnly(CODE, RANK, GROUP, PAGE, DRIVER_ERROR, ROLLBACK_COMPLETE, UNRESTORED_PAGES, MESSAGE);
        int[] unrestored = body.requireInts(UNRESTORED_PAGES, 0, Integer.MAX_VALUE);
        List<Integer> pages = new ArrayList<>(unrestored.length);
        for (int page : unrestored) {
            pages.add(page);
        }
        return new RankFailure(body.requireString(RANK), body.requireEnum(CODE, FailureCode.class), body.requireText(MESSAGE),
                body.requireInt(GROUP, RankFailure.NONE, Integer.MAX_VALUE), body.requireInt(PAGE, RankFailure.NONE, Integer.MAX_VALUE),
                body.optionalString(DRIVER_ERROR), body.requireBoolean(ROLLBACK_COMPLETE), pages);
    }
}
