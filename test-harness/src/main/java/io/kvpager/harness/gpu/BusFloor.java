package io.kvpager.harness.gpu;

import io.vertx.core.DeploymentOptions;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.ThreadingModel;
import io.vertx.core.VerticleBase;
import io.vertx.core.Vertx;
import io.vertx.core.eventbus.DeliveryOptions;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.util.ArrayList;
import java.util.List;

/**
 * The messaging floor under kvpager's path: a request from an event-loop context to {@code tp}
 * consumers, each on a one-thread worker pool of its own as a rank worker is, answering at once,
 * joined as the coordinator joins its ranks. What kvpager adds beyond the driver floor and this is
 * its own bookkeeping.
 */
final class BusFloor {

    private static final String ADDRESS = "kvpager.bench.echo.";

    private BusFloor() {
    }

    /** Median microseconds of one joined fan-out to {@code tp} echo ranks. */
    static double medianMicros(Vertx vertx, int tp, int repeats) {
        List<String> deployments = new ArrayList<>();
        for (int r = 0; r < tp; r++) {
            String address = ADDRESS + r;
            deployments.add(Await.of(vertx.deployVerticle(new VerticleBase() {
                @Override
                public Future<?> start() {
                    return vertx.eventBus().<JsonObject>consumer(address, m -> m.reply(new JsonObject()
                            .put("mapped", m.body().getJsonArray("pages")))).completion();
                }
            }, new DeploymentOptions().setThreadingModel(ThreadingModel.WORKER).setWorkerPoolName("kvpager-bench-echo-" + r)
                    .setWorkerPoolSize(1))));
        }
        try {
            double[] times = new double[repeats];
            Promise<Void> done = Promise.promise();
            vertx.getOrCreateContext().runOnContext(v -> step(vertx, tp, -50, times, done));
            Await.of(done.future());
            return MapPathBenchmark.median(times);
        } finally {
            for (String id : deployments) {
                Await.of(vertx.undeploy(id));
            }
        }
    }

    private static void step(Vertx vertx, int tp, int i, double[] times, Promise<Void> done) {
        if (i == times.length) {
            done.complete();
            return;
        }
        long t0 = System.nanoTime();
        List<Future<?>> replies = new ArrayList<>();
        for (int r = 0; r < tp; r++) {
            replies.add(vertx.eventBus().request(ADDRESS + r,
                    new JsonObject().put("group", 0).put("pages", new JsonArray().add(i & 255)),
                    new DeliveryOptions().addHeader("action", "map")));
        }
        Future.join(replies).onComplete(ar -> {
            if (ar.failed()) {
                done.fail(ar.cause());
                return;
            }
            if (i >= 0) {
                times[i] = (System.nanoTime() - t0) / 1e3;
            }
            step(vertx, tp, i + 1, times, done);
        });
    }
}
