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
 */
public record GpuStats(String gpu, List<String> ranks, long capacityBytes, long takenBytes, long heldBytes, long leasedBytes) {

    public GpuStats {
        ranks = List.copyOf(ranks);
    }

    public JsonObject toJson() {
        return new JsonObject().put("gpu", gpu).put("ranks", new JsonArray(new ArrayList<>(ranks)))
                .put("capacityBytes", capacityBytes).put("takenBytes", takenBytes).put("heldBytes", heldBytes)
                .put("leasedBytes", leasedBytes);
    }
}
