package io.kvpager.harness.gpu;

import io.kvpager.Geometry;
import io.kvpager.cuda.CudaDeviceFactory;
import io.kvpager.cuda.RawPageLoop;
import io.kvpager.device.GroupTensors;
import io.kvpager.device.HandlePoolOptions;
import io.kvpager.device.RankHandlePool;
import io.kvpager.spi.Device;
import io.vertx.core.DeploymentOptions;
import io.vertx.core.Future;
import io.vertx.core.ThreadingModel;
import io.vertx.core.VerticleBase;
import io.vertx.core.Vertx;
import io.vertx.core.eventbus.MessageConsumer;
import io.vertx.core.json.JsonObject;
import java.util.Map;

/**
 * The release path's floors taken apart where a rank worker runs them: an event-bus consumer on a
 * one-thread worker pool of its own, as a rank worker is, that maps or unmaps page ids
 * {@code 0 .. n-1} on GPU 0 and answers. Two kinds: {@link Kind#RAW} runs the driver floor's loop
 * ({@link RawPageLoop}: create, map, set access, synchronize; synchronize, unmap, release), and
 * {@link Kind#MAPPER} kvpager's own device mapper ({@link GroupTensors} over the CUDA device with the
 * rank's handle pool), without the worker's messages, owners or answer cache; {@link Kind#SPIN}
 * keeps its thread busy for {@link #SPIN_NANOS} without a driver call, to show whether a round trip
 * around a long handler costs more than the bus floor (threads that slept longer wake slower). Each consumer also
 * keeps the time its handler took, so the messaging and the work on the rank's thread can be told
 * apart: a round trip less the handler's time is what the bus cost in that round.
 */
final class RankThreadFloor implements AutoCloseable {

    /** What the consumer runs on its thread. */
    enum Kind {
        RAW, MAPPER, SPIN
    }

    /** How long a {@link Kind#SPIN} handler keeps its thread busy: about what the driver takes for one page id. */
    static final long SPIN_NANOS = 60_000;

    private static final String ADDRESS = "kvpager.bench.rank-floor.";

    private final Vertx vertx;
    private final String address;
    private final long[] handlerNanos;
    private int handled;
    private String deployment;
    private RawPageLoop raw;
    private Device device;
    private RankHandlePool pool;
    private GroupTensors tensors;
    private MessageConsumer<JsonObject> consumer;

    private RankThreadFloor(Vertx vertx, String address, long[] handlerNanos) {
        this.vertx = vertx;
        this.address = address;
        this.handlerNanos = handlerNanos;
    }

    /**
     * Deploys a consumer of {@code kind} over {@code geometry} on GPU 0, on a one-thread worker
     * pool of its own as a rank worker is, keeping up to {@code samples} handler times.
     */
    static RankThreadFloor open(Vertx vertx, Kind kind, Geometry geometry, int samples) {
        String name = kind.name().toLowerCase();
        RankThreadFloor floor = new RankThreadFloor(vertx, ADDRESS + name, new long[samples]);
        floor.deployment = Await.of(vertx.deployVerticle(new VerticleBase() {
            @Override
            public Future<?> start() {
                floor.start(kind, geometry);
                return floor.consumer.completion();
            }

            @Override
            public Future<?> stop() {
                floor.stop();
                return Future.succeededFuture();
            }
        }, new DeploymentOptions().setThreadingModel(ThreadingModel.WORKER)
                .setWorkerPoolName("kvpager-bench-rank-floor-" + name).setWorkerPoolSize(1)));
        return floor;
    }

    private void start(Kind kind, Geometry geometry) {
        if (kind == Kind.RAW) {
            raw = RawPageLoop.open(0, geometry, 1);
        } else if (kind == Kind.MAPPER) {
            device = new CudaDeviceFactory().open(0, "floor", Map.of());
            device.attach();
            pool = new RankHandlePool(device);
            tensors = GroupTensors.create(device, pool, 0, geometry, false, HandlePoolOptions.defaults(geometry));
        }
        consumer = vertx.eventBus().consumer(address, m -> {
            try {
                m.reply(handle(kind, m.body().getInteger("pages"), m.body().getBoolean("map")));
            } catch (RuntimeException e) {
                // the bench's request fails at once with the driver's error instead of timing out
                m.fail(500, String.valueOf(e.getMessage()));
            }
        });
    }

    private JsonObject handle(Kind kind, int n, boolean map) {
        long t0 = System.nanoTime();
        if (kind == Kind.SPIN) {
            while (System.nanoTime() - t0 < SPIN_NANOS) {
                Thread.onSpinWait();
            }
        } else if (raw != null) {
            if (map) {
                raw.map(0, n);
            } else {
                raw.unmap(0, n);
            }
        } else {
            int[] ids = new int[n];
            for (int p = 0; p < n; p++) {
                ids[p] = p;
            }
            if (map) {
                tensors.map(ids);
            } else {
                tensors.unmap(ids);
            }
        }
        record(System.nanoTime() - t0);
        return new JsonObject().put("pages", n);
    }

    private synchronized void record(long nanos) {
        handlerNanos[handled++ % handlerNanos.length] = nanos;
    }

    /**
     * One round: the medians in µs of {@code steps} maps, then unmaps, of page ids
     * {@code 0 .. pages-1} through this consumer, from an event loop; the handler times kept are
     * this round's.
     */
    double[] round(int pages, int steps) {
        synchronized (this) {
            handled = 0;
        }
        return TwoPhaseLoop.medians(vertx, steps, () -> step(pages));
    }

    /** Median µs of the handler's own time over the maps ({@code [0]}) and unmaps ({@code [1]}) of the last round. */
    synchronized double[] handlerMedians() {
        int n = Math.min(handled, handlerNanos.length) / 2 * 2;
        double[] map = new double[n / 2];
        double[] unmap = new double[n / 2];
        for (int i = 0; i < n; i++) {
            (i % 2 == 0 ? map : unmap)[i / 2] = handlerNanos[i] / 1e3;
        }
        return new double[] {Spread.median(map), Spread.median(unmap)};
    }

    /** A map of page ids {@code 0 .. pages-1}, then their unmap, each a request to the consumer. */
    private TwoPhaseLoop.Step step(int pages) {
        return new TwoPhaseLoop.Step() {
            @Override
            public Future<?> map() {
                return vertx.eventBus().request(address, new JsonObject().put("pages", pages).put("map", true));
            }

            @Override
            public Future<?> unmap() {
                return vertx.eventBus().request(address, new JsonObject().put("pages", pages).put("map", false));
            }
        };
    }

    /** Runs on the consumer's thread, when it is undeployed. */
    private void stop() {
        if (raw != null) {
            raw.close();
        }
        if (tensors != null) {
            tensors.destroy();
            pool.close();
            device.close();
        }
    }

    @Override
    public void close() {
        Await.of(vertx.undeploy(deployment));
    }
}
