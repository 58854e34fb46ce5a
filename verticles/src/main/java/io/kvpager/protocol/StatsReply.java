package io.kvpager.protocol;

import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * The answer to {@code stats}: the rank, its device and GPU, the thread that answered, every group,
 * the handles alive (the groups' and the idle ones, which hold device memory too), the idle-handle
 * pools, the groups whose owner's node left and that wait for their grace period to end, and the
 * device's memory.
 *
 * @param groups by group id
 */
public record StatsReply(String rank, String device, String gpu, String thread, Map<Integer, GroupStats> groups,
                         int handlesAlive, int pooledHandles, long pooledBytes, List<HandlePoolStats> handlePools,
                         int lapsingLeases, long deviceUsedBytes, long deviceFreeBytes, long deviceTotalBytes) {

    public static final String RANK = "rank";
    public static final String DEVICE = "device";
    public static final String GPU = "gpu";
    public static final String THREAD = "thread";
    public static final String GROUPS = "groups";
    public static final String HANDLES_ALIVE = "handlesAlive";
    public static final String POOLED_HANDLES = "pooledHandles";
    public static final String POOLED_BYTES = "pooledBytes";
    public static final String HANDLE_POOLS = "handlePools";
    public static final String LAPSING_LEASES = "lapsingLeases";
    public static final String DEVICE_USED_BYTES = "deviceUsedBytes";
    public static final String DEVICE_FREE_BYTES = "deviceFreeBytes";
    public static final String DEVICE_TOTAL_BYTES = "deviceTotalBytes";

    public StatsReply {
        groups = java.util.Collections.unmodifiableMap(new TreeMap<>(groups));
        handlePools = List.copyOf(handlePools);
    }

    public JsonObject toJson() {
        JsonObject perGroup = new JsonObject();
        groups.forEach((group, stats) -> perGroup.put(String.valueOf(group), stats.toJson()));
        JsonArray pools = new JsonArray();
        handlePools.forEach(pool -> pools.add(pool.toJson()));
        return new JsonObject().put(RANK, rank).put(DEVICE, device).put(GPU, gpu).put(THREAD, thread).put(GROUPS, perGroup)
                .put(HANDLES_ALIVE, handlesAlive).put(POOLED_HANDLES, pooledHandles).put(POOLED_BYTES, pooledBytes)
                .put(HANDLE_POOLS, pools).put(LAPSING_LEASES, lapsingLeases).put(DEVICE_USED_BYTES, deviceUsedBytes)
                .put(DEVICE_FREE_BYTES, deviceFreeBytes).put(DEVICE_TOTAL_BYTES, deviceTotalBytes);
    }

    public static StatsReply fromJson(JsonObject json) {
        RequestBody body = new RequestBody(json);
        body.requireOnly(RANK, DEVICE, GPU, THREAD, GROUPS, HANDLES_ALIVE, POOLED_HANDLES, POOLED_BYTES, HANDLE_POOLS,
                LAPSING_LEASES, DEVICE_USED_BYTES, DEVICE_FREE_BYTES, DEVICE_TOTAL_BYTES);
        RequestBody perGroup = body.requireObject(GROUPS);
        Map<Integer, GroupStats> groups = new TreeMap<>();
        for (String key : perGroup.json().fieldNames()) {
            int group;
            try {
                group = Integer.parseInt(key);
            } catch (NumberFormatException e) {
                throw new IllegalArgumentException(GROUPS + " must be keyed by group ids, got \"" + key + "\"");
            }
            if (group < 0 || !String.valueOf(group).equals(key)) {
                throw new IllegalArgumentException(GROUPS + " must be keyed by group ids, got \"" + key + "\"");
            }
            groups.put(group, GroupStats.read(perGroup.requireObject(key)));
        }
        List<HandlePoolStats> pools = new ArrayList<>();
        for (RequestBody pool : body.requireObjects(HANDLE_POOLS)) {
            pools.add(HandlePoolStats.read(pool));
        }
        return new StatsReply(body.requireString(RANK), body.requireString(DEVICE), body.requireString(GPU),
                body.requireString(THREAD), groups, body.requireInt(HANDLES_ALIVE, 0, Integer.MAX_VALUE),
                body.requireInt(POOLED_HANDLES, 0, Integer.MAX_VALUE), body.requireLong(POOLED_BYTES, 0, Long.MAX_VALUE), pools,
                body.requireInt(LAPSING_LEASES, 0, Integer.MAX_VALUE), body.requireLong(DEVICE_USED_BYTES, 0, Long.MAX_VALUE),
                body.requireLong(DEVICE_FREE_BYTES, 0, Long.MAX_VALUE), body.requireLong(DEVICE_TOTAL_BYTES, 0, Long.MAX_VALUE));
    }
}
