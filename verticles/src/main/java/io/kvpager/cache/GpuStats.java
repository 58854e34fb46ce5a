package io.kvpager.cache;

import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;

import java.util.ArrayList;
import java.util.List;

/**
 * One GPU a pool's ranks run on, as its memory broker counts it: every cache on that GPU takes its
 * pages' bytes from the same budget.
 *
 * @param gpu the GPU's name, e.g. {@code cuda:0@host-a} or {@code sim:default:0@host-a}
 * @param ranks the pool's ranks on it ({@code "pp0/tp1"})
 * @param capacityBytes the budget all caches on it share
 * @param takenBytes bytes taken by all caches on it now, their leases' surplus included; -1 when the
 *     broker could not be read
 * @param heldBytes bytes this pool holds there: its pages, its standing memory, and the idle handles its ranks keep while its pages churn
 * @param leasedBytes bytes this pool has leased there: what it holds and a surplus that spares most
 *     of its maps a trip to the broker
 * @param guaranteeBytes this pool's guaranteed share of the GPU's budget now (docs/sharing.md); -1
 *     when the broker could not be read
 * @param reclaimsAsked how many times this pool was asked to give memory back there
 * @param reclaimBlocksAsked how many blocks its engine was asked to free, over those times
 * @param timesCapped how many times it was capped at its guarantee for missing a reclaim's deadline
 * @param capped whether it is capped now
 */
public record GpuStats(String gpu, List<String> ranks, long capacityBytes, long takenBytes, long heldBytes, long leasedBytes,
                       long guaranteeBytes, long reclaimsAsked, long reclaimBlocksAsked, long timesCapped, boolean capped) {

    public GpuStats {
        ranks = List.copyOf(ranks);
    }

    /** Figures without the sharing policy's: no guarantee known (-1), never asked, never capped. */
    public GpuStats(String gpu, List<String> ranks, long capacityBytes, long takenBytes, long heldBytes, long leasedBytes) {
        this(gpu, ranks, capacityBytes, takenBytes, heldBytes, leasedBytes, -1, 0, 0, 0, false);
    }

    /** Reads back what {@link #toJson()} wrote; a missing or mistyped field names itself. */
    public static GpuStats fromJson(JsonObject json) {
        return new GpuStats(StatsJson.string(json, "gpu"), StatsJson.list(json, "ranks", String.class, rank -> (String) rank),
                StatsJson.number(json, "capacityBytes"), StatsJson.number(json, "takenBytes"), StatsJson.number(json, "heldBytes"),
                StatsJson.number(json, "leasedBytes"), StatsJson.number(json, "guaranteeBytes"), StatsJson.number(json, "reclaimsAsked"),
                StatsJson.number(json, "reclaimBlocksAsked"), StatsJson.number(json, "timesCapped"), StatsJson.bool(json, "capped"));
    }

    public JsonObject toJson() {
        return new JsonObject().put("gpu", gpu).put("ranks", new JsonArray(new ArrayList<>(ranks)))
                .put("capacityBytes", capacityBytes).put("takenBytes", takenBytes).put("heldBytes", heldBytes)
                .put("leasedBytes", leasedBytes).put("guaranteeBytes", guaranteeBytes).put("reclaimsAsked", reclaimsAsked)
                .put("reclaimBlocksAsked", reclaimBlocksAsked).put("timesCapped", timesCapped).put("capped", capped);
    }
}
