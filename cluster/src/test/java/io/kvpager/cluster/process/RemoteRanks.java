package io.kvpager.cluster.process;

import io.kvpager.cache.KvCache;
import io.kvpager.internal.CoordinatorView;
import io.kvpager.sim.FaultPlan;
import io.kvpager.sim.SimOptions;
import io.kvpager.internal.CoordinatorView;
import io.kvpager.worker.RankWorker;
import io.kvpager.worker.RankWorkerOptions;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.eventbus.DeliveryOptions;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;

import static io.kvpager.cluster.process.TestClusters.await;

/**
 * What a multi-process test asks the rank workers of other processes, straight over the event
 * bus, and the ledger of a cache whose coordinator runs in the test's JVM: the two sides it
 * compares after a failure.
 */
public final class RemoteRanks {

    private RemoteRanks() {
    }

    /** Pages of group 0 mapped on rank {@code pp0/tp<tp>} of {@code instance}, asked from its worker. */
    public static long mappedOn(Vertx vertx, String instance, int tp) {
        return groupFigure(await(request(vertx, instance, tp, "stats", new JsonObject())), "mappedPages");
    }

    /** One figure of group 0 in a worker's stats reply; 0 when the group has no tensors there. */
    public static long groupFigure(JsonObject stats, String figure) {
        return stats.getJsonObject("groups").getJsonObject("0", new JsonObject()).getLong(figure, 0L);
    }

    /** Sends {@code action} with {@code body} to rank {@code pp0/tp<tp>} of {@code instance}, waiting up to 10 s. */
    public static Future<JsonObject> request(Vertx vertx, String instance, int tp, String action, JsonObject body) {
        return vertx.eventBus().<JsonObject>request(RankWorker.address(instance, 0, tp), body,
                new DeliveryOptions().addHeader("action", action).setSendTimeout(10_000)).map(m -> m.body());
    }

    /** Rank {@code pp0/tp<tp>} of {@code instance} on a simulated GPU of its own (1 GiB) with {@code faults}, as a spawned node deploys it. */
    public static JsonObject simWorker(String instance, int tp, JsonArray faults, long sendTimeoutMs) {
        SimOptions sim = SimOptions.defaults().withGpuKey(instance + "-" + tp).withCapacityBytes(1L << 30).withFaults(FaultPlan.parse(faults).faults());
        return new RankWorkerOptions().setInstance(instance).setPp(0).setTp(tp).setGpu(tp).setSim(sim).setSendTimeoutMs(sendTimeoutMs).toJson();
    }

    /** Checks the ledger's invariants on the coordinator's context; throws what it finds. */
    public static void invariantsHold(KvCache cache) {
        await(CoordinatorView.of(cache).invariantsHold());
    }
}
