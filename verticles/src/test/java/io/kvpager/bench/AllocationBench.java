package io.kvpager.bench;

import io.kvpager.cache.CacheStats;
import io.kvpager.cache.KvCache;
import io.kvpager.cache.KvCacheOptions;
import io.kvpager.internal.CoordinatorView;
import io.kvpager.protocol.PoolRanks;
import io.kvpager.impl.coordinator.RankFanOut;
import io.kvpager.impl.coordinator.RankReply;
import io.kvpager.protocol.RankTarget;
import io.kvpager.protocol.PagesRequest;
import io.kvpager.protocol.StatsRequest;
import io.kvpager.protocol.WorkerAction;
import io.kvpager.sim.SimOptions;
import io.kvpager.protocol.RankTarget;
import io.vertx.core.Context;
import io.vertx.core.DeploymentOptions;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.ThreadingModel;
import io.vertx.core.VerticleBase;
import io.vertx.core.Vertx;
import io.vertx.core.json.JsonObject;

import java.util.List;
import java.util.Locale;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;

/**
 * How a TP=4 cache serves a bursty trace on four simulated H200s with the measured driver
 * latencies, and what one fan-out costs on the event bus in one JVM.
 *
 * <pre>{@code
 * mvn -o -q -pl verticles -am test-compile dependency:build-classpath -Dmdep.outputFile=target/bench.classpath
 * java -cp "verticles/target/test-classes:verticles/target/classes:$(cat verticles/target/bench.classpath)" \
 *     io.kvpager.bench.AllocationBench [seed, default 42] [steps of 1 ms, default 15000]
 * }</pre>
 *
 * <p>Figures: the share of allocations served without waiting for a map (completed before
 * {@code alloc} returned), their latency, the mapped memory beyond the pages in use (reserve,
 * and pages held by the open batch fence) against the peak in use, and the fan-out round trip of
 * one map batch to four ranks next to the floor of one event-bus round trip to one worker thread.
 */
public final class AllocationBench {

    private static final int BENCH_PAGES = 1024;

    private AllocationBench() {
    }

    public static void main(String[] args) throws Exception {
        long seed = args.length > 0 ? Long.parseLong(args[0]) : 42;
        int steps = args.length > 1 ? Integer.parseInt(args[1]) : 15_000;
        int warmup = Math.min(3_000, steps / 5);
        Vertx vertx = Vertx.vertx();
        try {
            ServingLoop serving = await(serve(vertx, seed, steps, warmup));
            FanOutFigures fanOut = await(fanOut(vertx, 5_000));
            print(seed, steps, warmup, serving, fanOut);
        } finally {
            await(vertx.close());
        }
    }

    /** Geometry of a 7B-class model's shard: 32 layers, K and V, 16-token blocks of 8 KiB per rank. */
    private static KvCacheOptions options(String instance, boolean latency) {
        return new KvCacheOptions().setInstance(instance).setTp(4).setLayers(32).setKvBuffers(2).setBlockBytes(8 << 10)
                .setPages(BENCH_PAGES).setReserveLow(1).setReserveHigh(16).setAdaptiveReserve(true).setRefillIntervalMs(5)
                .setLocalWorkers(true).setSim(SimOptions.defaults().withGpuKey(instance).withLatency(latency));
    }

    private static Future<ServingLoop> serve(Vertx vertx, long seed, int steps, int warmup) {
        return KvCache.deploy(vertx, options("bench-serve", true)).compose(cache -> {
            CoordinatorView view = CoordinatorView.of(cache);
            Context context = view.context();
            BurstyTrace trace = new BurstyTrace(seed, 0.3, 3.0, 1.0 / 2_000, 1.0 / 100);
            return on(context, () -> new ServingLoop(vertx, cache, view.ledgerHere(), trace, warmup)
                    .run(steps, 1)).compose(loop -> agreed(vertx, cache, 100).compose(v -> cache.close()).map(loop));
        });
    }

    /**
     * Every rank holds what the pool counts: the benchmark's figures mean nothing otherwise. The
     * stats are no snapshot (a background refill or release may land between the pool's figures
     * and the ranks' answers), so a disagreement is asked again, every 10 ms, {@code tries} times.
     */
    private static Future<Void> agreed(Vertx vertx, KvCache cache, int tries) {
        return cache.stats().compose(stats -> {
            String wrong = disagreement(stats);
            if (wrong == null) {
                return Future.succeededFuture();
            }
            if (tries <= 1) {
                return Future.failedFuture(new IllegalStateException(wrong));
            }
            Promise<Void> later = Promise.promise();
            vertx.setTimer(10, t -> agreed(vertx, cache, tries - 1).onComplete(later));
            return later.future();
        });
    }

    private static String disagreement(CacheStats stats) {
        for (var rank : stats.ranks()) {
            if (rank.mappedPages() != stats.pool().mappedPages()) {
                return rank.rank() + " maps " + rank.mappedPages() + " pages, the pool " + stats.pool().mappedPages();
            }
        }
        return null;
    }

    /** Fan-out and floor figures, in microseconds; {@code statsP50[n - 1]} is a stats fan-out to {@code n} ranks. */
    private record FanOutFigures(double mapP50, double mapP99, double[] statsP50, double floorP50, double floorP99,
                                 double floor4P50) {
    }

    private static Future<FanOutFigures> fanOut(Vertx vertx, int batches) {
        KvCacheOptions options = options("bench-fanout", false).setReserveLow(0).setReserveHigh(0).setAdaptiveReserve(false);
        return KvCache.deploy(vertx, options).compose(cache -> echoes(vertx, 4).compose(echo -> {
                    Context context = vertx.getOrCreateContext();
                    RankFanOut fan = new RankFanOut(vertx.eventBus(), PoolRanks.of(options), 5_000);
                    LatencySamples maps = new LatencySamples();
                    LatencySamples[] stats = {new LatencySamples(), new LatencySamples(), new LatencySamples(), new LatencySamples()};
                    LatencySamples floor = new LatencySamples();
                    LatencySamples floor4 = new LatencySamples();
                    List<RankTarget> ranks = PoolRanks.of(options).ranks();
                    int warmup = batches / 5;
                    return on(context, () -> loop(batches, i -> {
                        int[] batch = {i % BENCH_PAGES};
                        int group = fan.pool().group();
                        PagesRequest map = new PagesRequest(WorkerAction.MAP, fan.nextRequestId(), group, fan.owner(), batch);
                        JsonObject page = map.toJson();
                        int width = 1 + i % 4;
                        long start = System.nanoTime();
                        return fan.toAll(map).compose(replies -> {
                            record(maps, i >= warmup, start);
                            requireAll(replies);
                            return fan.toAll(new PagesRequest(WorkerAction.UNMAP, fan.nextRequestId(), group, fan.owner(), batch));
                        }).compose(replies -> {
                            requireAll(replies);
                            long statsStart = System.nanoTime();
                            return fan.send(ranks.subList(0, width), new StatsRequest(), 5_000)
                                    .onSuccess(r -> record(stats[width - 1], i >= warmup, statsStart));
                        }).compose(replies -> {
                            long floorStart = System.nanoTime();
                            return vertx.eventBus().request(Echo.ADDRESS + 0, page)
                                    .onSuccess(r -> record(floor, i >= warmup, floorStart));
                        }).compose(reply -> {
                            long floorStart = System.nanoTime();
                            List<Future<?>> all = new java.util.ArrayList<>();
                            for (int e = 0; e < 4; e++) {
                                all.add(vertx.eventBus().request(Echo.ADDRESS + e, page));
                            }
                            return Future.join(all).onSuccess(r -> record(floor4, i >= warmup, floorStart));
                        }).mapEmpty();
                    })).map(v -> {
                        double[] statsP50 = new double[stats.length];
                        for (int n = 0; n < stats.length; n++) {
                            statsP50[n] = stats[n].percentileMicros(50);
                        }
                        return new FanOutFigures(maps.percentileMicros(50), maps.percentileMicros(99), statsP50,
                                floor.percentileMicros(50), floor.percentileMicros(99), floor4.percentileMicros(50));
                    })
                            .compose(figures -> cache.close().map(figures));
                }));
    }

    private static void record(LatencySamples samples, boolean measured, long start) {
        if (measured) {
            samples.add(System.nanoTime() - start);
        }
    }

    private static void requireAll(List<RankReply> replies) {
        if (!RankFanOut.failures(replies).isEmpty()) {
            throw new IllegalStateException("fan-out failed: " + RankFanOut.failures(replies));
        }
    }

    /** {@code body(0)}, then {@code body(1)}, ... one after the other. */
    private static Future<Void> loop(int times, java.util.function.IntFunction<Future<Void>> body) {
        Promise<Void> done = Promise.promise();
        next(0, times, body, done);
        return done.future();
    }

    private static void next(int i, int times, java.util.function.IntFunction<Future<Void>> body, Promise<Void> done) {
        if (i == times) {
            done.complete();
            return;
        }
        body.apply(i).onSuccess(v -> next(i + 1, times, body, done)).onFailure(done::fail);
    }

    private static <T> Future<T> on(Context context, Supplier<Future<T>> work) {
        Promise<T> promise = Promise.promise();
        context.runOnContext(v -> work.get().onComplete(promise));
        return promise.future();
    }

    private static <T> T await(Future<T> future) throws Exception {
        return future.toCompletionStage().toCompletableFuture().get(10, TimeUnit.MINUTES);
    }

    private static void print(long seed, int steps, int warmup, ServingLoop s, FanOutFigures f) {
        double atOnce = 100.0 * s.servedAtOnce() / Math.max(1, s.allocs());
        double extraMean = 100.0 * s.meanExtraPages() / Math.max(1, s.peakInUsePages());
        double extraMax = 100.0 * s.maxExtraPages() / Math.max(1, s.peakInUsePages());
        double reserveMean = 100.0 * s.meanReservePages() / Math.max(1, s.peakInUsePages());
        System.out.printf(Locale.ROOT, "kvpager allocation benchmark: TP=4 on sim H200s (measured driver latencies), "
                + "seed %d, %d steps of 1 ms after %d warm-up steps, %d requests, %d allocations, %d misses%n",
                seed, steps - warmup, warmup, s.requests(), s.allocs(), s.misses());
        System.out.println("| figure | value | goal |");
        System.out.println("| --- | --- | --- |");
        row("allocations served without waiting for a map", "%.2f %%", atOnce, ">= 99 %");
        System.out.printf(Locale.ROOT, "| alloc latency p50 / p99 / p99.9 | %.1f / %.1f / %.1f µs | p99 < 50 µs |%n",
                s.latency().percentileMicros(50), s.latency().percentileMicros(99), s.latency().percentileMicros(99.9));
        System.out.printf(Locale.ROOT, "| peak pages in use (each 128 MiB per rank) | %d | |%n", s.peakInUsePages());
        System.out.printf(Locale.ROOT, "| extra mapped vs peak in use: mean (reserve alone) / max | %.2f %% (%.2f %%) / %.2f %% | < 5 %% |%n",
                extraMean, reserveMean, extraMax);
        System.out.printf(Locale.ROOT, "| the most extra mapped pages: %d (%s) | | |%n", s.maxExtraPages(), s.maxExtraBreakdown());
        System.out.printf(Locale.ROOT, "| fan-out of one map batch to 4 ranks, p50 / p99 | %.1f / %.1f µs | p50 < 60 µs |%n",
                f.mapP50(), f.mapP99());
        System.out.printf(Locale.ROOT, "| fan-out of stats to 1 / 2 / 3 / 4 ranks, p50 | %.1f / %.1f / %.1f / %.1f µs | |%n",
                f.statsP50()[0], f.statsP50()[1], f.statsP50()[2], f.statsP50()[3]);
        System.out.printf(Locale.ROOT, "| floor: one request to one worker thread, p50 / p99 | %.1f / %.1f µs | |%n",
                f.floorP50(), f.floorP99());
        System.out.printf(Locale.ROOT, "| floor: Future.join of requests to 4 worker threads that answer at once, p50 | %.1f µs | |%n",
                f.floor4P50());
        System.out.printf(Locale.ROOT, "| map fan-out / 4-thread floor (p50) | %.2f x | |%n", f.mapP50() / f.floor4P50());
    }

    private static void row(String figure, String format, double value, String goal) {
        System.out.printf(Locale.ROOT, "| %s | " + format + " | %s |%n", figure, value, goal);
    }

    /** {@code n} echoes, each on a worker pool of one thread as a rank worker runs. */
    private static Future<Void> echoes(Vertx vertx, int n) {
        List<Future<String>> all = new java.util.ArrayList<>();
        for (int i = 0; i < n; i++) {
            all.add(vertx.deployVerticle(new Echo(Echo.ADDRESS + i), new DeploymentOptions()
                    .setThreadingModel(ThreadingModel.WORKER).setWorkerPoolName("bench-echo-" + i).setWorkerPoolSize(1)));
        }
        return Future.all(all).mapEmpty();
    }

    /** A worker-thread consumer that answers at once: the floor under any fan-out. */
    private static final class Echo extends VerticleBase {
        static final String ADDRESS = "bench.echo.";
        private final String address;

        Echo(String address) {
            this.address = address;
        }

        @Override
        public Future<?> start() {
            return vertx.eventBus().consumer(address, m -> m.reply(m.body())).completion();
        }
    }
}
