package io.kvpager.cache;

import io.vertx.codegen.annotations.GenIgnore;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;

import java.util.List;
import java.util.Objects;

/**
 * A snapshot of one cache: the pool's figures from the coordinator and each rank's from its
 * worker, so the two can be compared (every rank should map {@code pool.mappedPages()} pages).
 *
 * @param instance the cache's instance name
 * @param group the pool's group
 * @param stages the pp stages the pool spans
 * @param tp ranks per stage
 * @param state where the cache is (see {@link CacheState}); anything but {@link CacheState#READY} is
 *     not ready
 * @param reason why the state is not {@code ready}, in one line; {@code null} when it is ready
 * @param startFailure why the start failed, or {@code null}
 * @param refillFailure the last background refill or release failure since the last success, or {@code null}
 * @param pool the ledger's figures
 * @param ranks one entry per rank of the pool, stage by stage
 * @param gpus the GPUs the pool's ranks run on, as their memory brokers count them; empty when no
 *     worker named its GPU
 */
@GenIgnore(GenIgnore.PERMITTED_TYPE)
public record CacheStats(String instance, int group, List<Integer> stages, int tp, CacheState state, String reason,
                         String startFailure, String refillFailure, PoolStats pool, List<RankStats> ranks, List<GpuStats> gpus) {

    public CacheStats {
        Objects.requireNonNull(state, "state");
        stages = List.copyOf(stages);
        ranks = List.copyOf(ranks);
        gpus = List.copyOf(gpus);
    }

    /** A snapshot whose state needs no reason given. */
    public CacheStats(String instance, int group, List<Integer> stages, int tp, CacheState state, String startFailure,
                      String refillFailure, PoolStats pool, List<RankStats> ranks, List<GpuStats> gpus) {
        this(instance, group, stages, tp, state, null, startFailure, refillFailure, pool, ranks, gpus);
    }

    /** A snapshot without GPU figures. */
    public CacheStats(String instance, int group, List<Integer> stages, int tp, CacheState state, String startFailure,
                      String refillFailure, PoolStats pool, List<RankStats> ranks) {
        this(instance, group, stages, tp, state, startFailure, refillFailure, pool, ranks, List.of());
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

    /** How many times this cache was asked to give memory back, on all its GPUs. */
    public long reclaimsAsked() {
        long n = 0;
        for (GpuStats g : gpus) {
            n += g.reclaimsAsked();
        }
        return n;
    }

    /** How many blocks its engine was asked to free, on all its GPUs. */
    public long reclaimBlocksAsked() {
        long n = 0;
        for (GpuStats g : gpus) {
            n += g.reclaimBlocksAsked();
        }
        return n;
    }

    /** How many times it was capped at its guarantee for missing a reclaim's deadline, on all its GPUs. */
    public long timesCapped() {
        long n = 0;
        for (GpuStats g : gpus) {
            n += g.timesCapped();
        }
        return n;
    }

    /**
     * Reads back what {@link #toJson()} wrote (a coordinator's {@code stats} reply). A field that
     * is missing or of the wrong type fails with an {@link IllegalArgumentException} naming it.
     */
    public static CacheStats fromJson(JsonObject json) {
        return new CacheStats(StatsJson.string(json, "instance"), StatsJson.integer(json, "group"),
                StatsJson.list(json, "stages", Number.class, stage -> ((Number) stage).intValue()), StatsJson.integer(json, "tp"),
                CacheState.ofJsonName(StatsJson.string(json, "state")), StatsJson.optionalString(json, "reason"),
                StatsJson.optionalString(json, "startFailure"), StatsJson.optionalString(json, "refillFailure"),
                PoolStats.fromJson(StatsJson.object(json, "pool")),
                StatsJson.list(json, "ranks", JsonObject.class, rank -> RankStats.fromJson((JsonObject) rank)),
                json.containsKey("gpus") ? StatsJson.list(json, "gpus", JsonObject.class, gpu -> GpuStats.fromJson((JsonObject) gpu))
                        : List.of());
    }

    public JsonObject toJson() {
        JsonArray rankJson = new JsonArray();
        for (RankStats r : ranks) {
            rankJson.add(r.toJson());
        }
        JsonObject json = new JsonObject().put("instance", instance).put("group", group)
                .put("stages", new JsonArray(new java.util.ArrayList<>(stages))).put("tp", tp).put("state", state.jsonName());
        if (reason != null) {
            json.put("reason", reason);
        }
        if (startFailure != null) {
            json.put("startFailure", startFailure);
        }
        if (refillFailure != null) {
            json.put("refillFailure", refillFailure);
        }
        JsonArray gpuJson = new JsonArray();
        for (GpuStats g : gpus) {
            gpuJson.add(g.toJson());
        }
        return json.put("pool", pool.toJson()).put("ranks", rankJson).put("gpus", gpuJson);
    }
}
