package io.kvpager.harness;

import io.vertx.core.json.JsonObject;

/**
 * One rank as a {@link PoolSnapshot} found it: its worker's {@code stats} answer and what its
 * simulated GPU holds.
 *
 * @param rank {@code pp0/tp1}
 * @param worker the worker's {@code stats} answer, or {@code null} when it did not answer
 * @param down why the worker did not answer, or {@code null}
 * @param deviceOpen whether a device is open on the rank's GPU
 * @param deviceHandles physical handles alive on the rank's GPU
 * @param deviceBytes physical bytes in use on the rank's GPU
 */
public record RankAccount(String rank, JsonObject worker, String down, boolean deviceOpen, long deviceHandles,
                          long deviceBytes) {

    /** Whether the worker answered. */
    public boolean up() {
        return worker != null;
    }

    /** The worker's figures for {@code group}, empty when it has no tensors for it. */
    public JsonObject group(int group) {
        JsonObject groups = worker == null ? null : worker.getJsonObject("groups");
        JsonObject mine = groups == null ? null : groups.getJsonObject(String.valueOf(group));
        return mine == null ? new JsonObject() : mine;
    }

    /** A number from the worker's answer (0 when absent). */
    public long workerFigure(String key) {
        return worker != null && worker.getValue(key) instanceof Number n ? n.longValue() : 0;
    }

    /** A number from the worker's figures for {@code group} (0 when absent). */
    public long groupFigure(int group, String key) {
        return group(group).getValue(key) instanceof Number n ? n.longValue() : 0;
    }
}
