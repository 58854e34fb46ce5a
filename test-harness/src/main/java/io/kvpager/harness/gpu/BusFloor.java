package io.kvpager.harness.gpu;

import io.kvpager.protocol.Owner;
import io.kvpager.protocol.PagesRequest;
import io.kvpager.protocol.WorkerAction;
import io.vertx.core.Context;
import io.vertx.core.DeploymentOptions;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.ThreadingModel;
import io.vertx.core.VerticleBase;
import io.vertx.core.Vertx;
import io.vertx.core.internal.ContextInternal;
import io.vertx.core.internal.PromiseInternal;
import io.vertx.core.json.JsonObject;
import java.util.ArrayList;
import java.util.List;

/**
 * The messaging floor under kvpager's path: a request from an event-loop context to {@code tp}
 * consumers, each on a one-thread worker pool of its own as a rank worker is, answering at once,
 * joined as the coordinator joins its ranks. What kvpager adds beyond the driver floor and this is
 * its own bookkeeping. The echo ranks stay deployed until {@link #close}, so that rounds of it can
 * alternate with other rounds.
 */
final class BusFloor implements AutoCloseable {

    private static final String ADDRESS = "kvpager.bench.echo.";
    /** Who the floor's map requests say they come from: the echo reads nothing, but the body is a map's. */
    private static final Owner FLOOR_OWNER = new Owner("bus-floor", 1);

    private final Vertx vertx;
    private final int tp;
    private final List<String> deployments = new ArrayList<>();

    private BusFloor(Vertx vertx, int tp) {
        this.vertx = vertx;
        this.tp = tp;
    }

    /** Deploys {@code tp} echo ranks. */
    static BusFloor open(Vertx vertx, int tp) {
        if (tp < 1) {
            throw new IllegalArgumentException("tp must be at least 1, got " + tp);
        }
        BusFloor floor = new BusFloor(vertx, tp);
        try {
            for (int r = 0; r < tp; r++) {
                String address = ADDRESS + r;
                floor.deployments.add(Await.of(vertx.deployVerticle(new VerticleBase() {
                    @Override
                    public Future<?> start() {
                        return vertx.eventBus().<JsonObject>consumer(address, m -> m.reply(new JsonObject()
                                .put("mapped", m.body().getJsonArray("pages")))).completion();
                    }
                }, new DeploymentOptions().setThreadingModel(ThreadingModel.WORKER)
                        .setWorkerPoolName("kvpager-bench-echo-" + r).setWorkerPoolSize(1))));
            }
        } catch (RuntimeException e) {
            floor.close();
            throw e;
        }
        return floor;
    }

    /** Median µs of {@code repeats} joined fan-outs, after a few untimed ones. */
    double medianMicros(int repeats) {
        return medianMicros(repeats, null);
    }

    /**
     * Median µs of {@code repeats} joined fan-outs asked from an event loop of its own through
     * {@code relay}, another event-loop context that sends the requests and joins the replies, as
     * a caller on its own event loop reaches a cache's coordinator: the hand-off to the relay and
     * the answer's way back added to the floor. {@code null} sends from the timing context itself.
     */
    double medianMicros(int repeats, Context relay) {
        double[] times = new double[repeats];
        Promise<Void> done = Promise.promise();
        vertx.getOrCreateContext().runOnContext(v -> step(-Math.min(50, repeats), times, relay, done));
        Await.of(done.future());
        return Spread.median(times);
    }

    private void step(int i, double[] times, Context relay, Promise<Void> done) {
        if (i == times.length) {
            done.complete();
            return;
        }
        long t0 = System.nanoTime();
        Future<?> joined;
        if (relay == null) {
            joined = fanOut(i);
        } else {
            // a promise of the timing context: its callback runs back there, as a cache answers its caller
            PromiseInternal<Object> answer = ((ContextInternal) Vertx.currentContext()).promise();
            relay.runOnContext(v -> fanOut(i).onComplete(answer));
            joined = answer.future();
        }
        joined.onComplete(ar -> {
            if (ar.failed()) {
                done.fail(ar.cause());
                return;
            }
            if (i >= 0) {
                times[i] = (System.nanoTime() - t0) / 1e3;
            }
            step(i + 1, times, relay, done);
        });
    }

    private Future<?> fanOut(int i) {
        List<Future<?>> replies = new ArrayList<>();
        for (int r = 0; r < tp; r++) {
            PagesRequest map = new PagesRequest(WorkerAction.MAP, "floor-" + i, 0, FLOOR_OWNER, new int[] {i & 255});
            replies.add(vertx.eventBus().request(ADDRESS + r, map.toJson(), map.action().delivery()));
        }
        return Future.join(replies);
    }

    @Override
    public void close() {
        for (String id : deployments) {
            Await.of(vertx.undeploy(id));
        }
        deployments.clear();
    }
}
