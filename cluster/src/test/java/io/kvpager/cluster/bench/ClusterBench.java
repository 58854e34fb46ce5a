package io.kvpager.cluster.bench;

import io.kvpager.protocol.CreateTensorsRequest;
import io.kvpager.protocol.StatsRequest;
import io.kvpager.cache.KvCache;
import io.kvpager.bench.LatencySamples;
import io.kvpager.cache.KvCache;
import io.kvpager.cache.KvCacheOptions;
import io.kvpager.cluster.ClusterNode;
import io.kvpager.cluster.process.SpawnedNode;
import io.kvpager.cluster.process.TestClusters;
import io.kvpager.internal.CoordinatorView;
import io.kvpager.impl.coordinator.FanOutMapper;
import io.kvpager.impl.coordinator.LocalKvCache;
import io.kvpager.protocol.PoolRanks;
import io.kvpager.impl.coordinator.RankFanOut;
import io.kvpager.impl.coordinator.RankRejoin;
import io.kvpager.protocol.RankTarget;
import io.kvpager.internal.membership.RankNodes;
import io.kvpager.protocol.WorkerAction;
import io.kvpager.sim.SimOptions;
import io.kvpager.protocol.RankTarget;
import io.kvpager.internal.membership.RankNodes;
import io.kvpager.worker.RankWorkerOptions;
import io.vertx.core.Context;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.Vertx;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;

import java.lang.management.ManagementFactory;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.function.Supplier;

import static io.kvpager.cluster.process.TestClusters.await;

/**
 * What a clustered cache costs over loopback, on the simulated device without its latency model:
 * how long a coordinator and two rank workers (each a JVM of its own) take to form a cluster and
 * a ready cache, and the fan-out of one batch of 16 page ids to TP=2 and TP=4 ranks in other
 * processes, next to the floor of one event-bus round trip to one of them.
 *
 * <pre>{@code
 * mvn -o -q -pl cluster -am test-compile dependency:build-classpath -Dmdep.outputFile=target/bench.classpath -Dmdep.includeScope=test
 * java -cp "cluster/target/test-classes:cluster/target/classes:$(cat cluster/target/bench.classpath)" \
 *     io.kvpager.cluster.bench.ClusterBench [rounds, default 2000] [warm-up rounds, default 1000]
 * }</pre>
 *
 * <p>The fan-out is the coordinator's own ({@link FanOutMapper} over {@link RankFanOut}, with the
 * cluster's {@link RankNodes}), timed from the coordinator's event loop; a round maps 16 page ids
 * on every rank and unmaps them, sends the floor's one request, and allocates 16 pages through the
 * cache: the ledger, the pool's GPU lease (which reaches the broker in the cluster's shared data
 * only when the lease must grow), and the same fan-out; then frees and trims them. The load average
 * is printed before and after, as the machine may be shared.
 */
public final class ClusterBench {

    private static final int BATCH = 16;
    private static final Duration START = Duration.ofSeconds(120);
    /** The bench's spawned JVMs compile fully: their steady state is what is measured. */
    private static final List<String> JVM = List.of("-Xmx512m", "-XX:+UseParallelGC");

    private ClusterBench() {
    }

    public static void main(String[] args) {
        int rounds = args.length > 0 ? Integer.parseInt(args[0]) : 2000;
        int warmup = args.length > 1 ? Integer.parseInt(args[1]) : 1000;
        System.out.printf(Locale.ROOT, "kvpager cluster bench: %d cores, %s%n%n", Runtime.getRuntime().availableProcessors(),
                System.getProperty("java.vm.version"));
        System.out.printf(Locale.ROOT, "load average at the start: %.2f%n%n", loadAverage());
        try {
            startTime();
            fanOut(rounds, warmup);
        } catch (RuntimeException e) {
            // the spawned worker JVMs and the cluster's threads would keep this one alive
            e.printStackTrace();
            System.exit(1);
        }
        System.out.printf(Locale.ROOT, "%nload average at the end: %.2f%n", loadAverage());
        System.exit(0);
    }

    /** A coordinator node here, two worker processes, a TP=2 cache ready on them. */
    private static void startTime() {
        long began = System.nanoTime();
        ClusterNode here = TestClusters.startHere(TestClusters.freshName("bench-start"));
        long joined = System.nanoTime();
        List<SpawnedNode> workers = new ArrayList<>();
        for (int tp = 0; tp < 2; tp++) {
            workers.add(SpawnedNode.spawn("bench-start-tp" + tp, TestClusters.spec(here,
                    new JsonArray().add(worker("start", tp, 0)), new JsonArray()), JVM));
        }
        long[] ready = new long[workers.size()];
        for (int i = 0; i < workers.size(); i++) {
            workers.get(i).awaitReady(START);
            ready[i] = System.nanoTime();
        }
        KvCache cache = await(KvCache.deploy(here.vertx(), options("start", 2)));
        long done = System.nanoTime();
        System.out.println("| cluster start: coordinator + 2 worker JVMs + TP=2 cache | ms |");
        System.out.println("| --- | --- |");
        System.out.printf(Locale.ROOT, "| coordinator node joined (first member) | %d |%n", ms(joined - began));
        for (int i = 0; i < workers.size(); i++) {
            System.out.printf(Locale.ROOT, "| worker tp%d: spawn to ready (JVM start, join %d ms, worker deployed) | %d |%n",
                    i, workers.get(i).joinMillis(), ms(ready[i] - joined));
        }
        System.out.printf(Locale.ROOT, "| cache deployed (tensors created on both ranks, GPU budgets opened) | %d |%n",
                ms(done - Math.max(ready[0], ready[1])));
        System.out.printf(Locale.ROOT, "| total, coordinator start to cache ready | %d |%n%n", ms(done - began));
        await(cache.close());
        workers.forEach(SpawnedNode::close);
        await(here.close());
    }

    /** Four worker processes: rank tp<i> of the TP=4 cache, and of the TP=2 cache for i < 2. */
    private static void fanOut(int rounds, int warmup) {
        ClusterNode here = TestClusters.startHere(TestClusters.freshName("bench-fanout"));
        List<SpawnedNode> workers = new ArrayList<>();
        for (int tp = 0; tp < 4; tp++) {
            JsonArray ranks = new JsonArray().add(worker("fan4", tp, tp));
            if (tp < 2) {
                ranks.add(worker("fan2", tp, tp));
            }
            workers.add(SpawnedNode.spawn("bench-fanout-tp" + tp, TestClusters.spec(here, ranks, new JsonArray()), JVM));
        }
        workers.forEach(w -> w.awaitReady(START));
        System.out.printf(Locale.ROOT, "| fan-out of %d page ids, each rank in its own JVM, %d rounds after %d | p50 µs | p99 µs |%n",
                BATCH, rounds, warmup);
        System.out.println("| --- | --- | --- |");
        for (int tp : new int[] {2, 4}) {
            KvCache cache = await(KvCache.deploy(here.vertx(), options("fan" + tp, tp)));
            Figures f = await(measure(here.vertx(), (LocalKvCache) cache, tp, rounds, warmup));
            System.out.printf(Locale.ROOT, "| TP=%d map | %.0f | %.0f |%n", tp, f.map.percentileMicros(50), f.map.percentileMicros(99));
            System.out.printf(Locale.ROOT, "| TP=%d unmap | %.0f | %.0f |%n", tp, f.unmap.percentileMicros(50), f.unmap.percentileMicros(99));
            System.out.printf(Locale.ROOT, "| TP=%d floor: stats round trip to one rank | %.0f | %.0f |%n", tp,
                    f.floor.percentileMicros(50), f.floor.percentileMicros(99));
            System.out.printf(Locale.ROOT, "| TP=%d alloc of %d pages through the cache (ledger, GPU lease, map) | %.0f | %.0f |%n", tp,
                    BATCH, f.alloc.percentileMicros(50), f.alloc.percentileMicros(99));
            System.out.printf(Locale.ROOT, "| TP=%d alloc / map, p50 | %.2f | |%n", tp,
                    f.alloc.percentileMicros(50) / f.map.percentileMicros(50));
            await(cache.close());
        }
        workers.forEach(SpawnedNode::close);
        await(here.close());
    }

    private record Figures(LatencySamples map, LatencySamples unmap, LatencySamples floor, LatencySamples alloc) {
    }

    private static Future<Figures> measure(Vertx vertx, LocalKvCache cache, int tp, int rounds, int warmup) {
        CoordinatorView view = CoordinatorView.of(cache);
        Context context = view.context();
        Promise<Figures> done = Promise.promise();
        // the ranks answer only their group's owner: the bench's fan-out speaks as the cache's coordinator
        view.call(CoordinatorView.Inside::owner).onFailure(done::fail).onSuccess(owner -> context.runOnContext(v -> {
            PoolRanks pool = new PoolRanks(cache.options().getInstance(), List.of(0), tp, 0);
            RankNodes nodes = RankNodes.of(vertx, context, pool, ranks -> { });
            RankFanOut fanOut = new RankFanOut(vertx.eventBus(), pool, nodes, 30_000, owner);
            FanOutMapper mapper = new FanOutMapper(fanOut, new RankRejoin(vertx, fanOut,
                    new CreateTensorsRequest(0, owner, cache.options().geometry(), false, null), 30_000, 50, () -> new int[0]));
            int[] pages = new int[BATCH];
            for (int i = 0; i < BATCH; i++) {
                pages[i] = i;
            }
            Figures figures = new Figures(new LatencySamples(), new LatencySamples(), new LatencySamples(), new LatencySamples());
            List<RankTarget> one = List.of(new RankTarget(0, 0));
            // each round times all four in turn, so that a machine whose load moves moves them alike
            loop(rounds + warmup, i -> {
                boolean measured = i >= warmup;
                return timed(measured ? figures.map : null, () -> Future.fromCompletionStage(mapper.map(pages)))
                        .compose(x -> timed(measured ? figures.unmap : null, () -> Future.fromCompletionStage(mapper.unmap(pages))))
                        .compose(x -> timed(measured ? figures.floor : null, () -> fanOut.send(one, new StatsRequest(), 30_000)))
                        .compose(x -> timed(measured ? figures.alloc : null, () -> cache.alloc(BATCH * 32)))
                        .compose(a -> cache.free(a)).compose(freed -> cache.trim());
            }).map(x -> figures).andThen(x -> nodes.close()).onComplete(done);
        }));
        return done.future();
    }

    private interface Round {
        Future<?> run(int i);
    }

    private static Future<Void> loop(int n, Round round) {
        Promise<Void> done = Promise.promise();
        step(0, n, round, done);
        return done.future();
    }

    private static void step(int i, int n, Round round, Promise<Void> done) {
        if (i == n) {
            done.complete();
            return;
        }
        round.run(i).onComplete(ar -> {
            if (ar.failed()) {
                done.fail(ar.cause());
            } else {
                step(i + 1, n, round, done);
            }
        });
    }

    private static <T> Future<T> timed(LatencySamples into, Supplier<Future<T>> call) {
        long start = System.nanoTime();
        return call.get().andThen(ar -> {
            if (into != null && ar.succeeded()) {
                into.add(System.nanoTime() - start);
            }
        });
    }

    private static JsonObject worker(String instance, int tp, int gpu) {
        return new RankWorkerOptions().setInstance(instance).setPp(0).setTp(tp).setGpu(gpu).setSim(SimOptions.defaults().withGpuKey("bench")).toJson();
    }

    private static KvCacheOptions options(String instance, int tp) {
        return new KvCacheOptions().setInstance(instance).setTp(tp).setLayers(2).setKvBuffers(2).setBlockBytes(64 << 10)
                .setPages(64).setReserveLow(0).setReserveHigh(0).setAdaptiveReserve(false).setSendTimeoutMs(30_000)
                .setTensorsDeadlineMs(60_000).setLocalWorkers(false);
    }

    private static double loadAverage() {
        return ManagementFactory.getOperatingSystemMXBean().getSystemLoadAverage();
    }

    private static long ms(long nanos) {
        return nanos / 1_000_000;
    }
}
