package io.kvpager.bench;

import io.kvpager.Geometry;
import io.kvpager.Layout;
import io.kvpager.cache.KvCache;
import io.kvpager.cache.KvCacheOptions;
import io.kvpager.device.LocalPageMapper;
import io.kvpager.sim.SimDevice;
import io.kvpager.sim.SimDeviceFactory;
import io.kvpager.sim.SimGpus;
import io.kvpager.sim.SimOptions;
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
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;

/**
 * What kvpager's own map path costs the CPU: {@code alloc(n)} then {@code free} plus {@code trim}
 * through a {@link KvCache} on simulated GPUs with no driver latency, timed from an event-loop
 * context of its own as an engine calls it, beside two floors measured in the same run: the same
 * map and unmap on a {@link LocalPageMapper} per rank on one thread (the driver work, through the
 * device-side code a rank worker runs, with no messages), and a joined request to {@code tp} echo consumers on one-thread worker pools (the
 * messages with no work). PAGE_MAJOR, one block per page id, no reserve, so every alloc maps
 * {@code n} page ids and every trim unmaps them. It also counts the event-bus messages one
 * alloc + free + trim sends, by action.
 *
 * <pre>{@code
 * mvn -o -q -pl verticles -am test-compile dependency:build-classpath -Dmdep.outputFile=target/bench.classpath
 * java -cp "verticles/target/test-classes:verticles/target/classes:$(cat verticles/target/bench.classpath)" \
 *     io.kvpager.bench.MapPathBench [repeats per round, default 500] [rounds, default 5] [tp sizes, default 1,4] [batches, default 1,16]
 * }</pre>
 */
public final class MapPathBench {

    private static final int LAYERS = 16;
    private static final int KV_BUFFERS = 2;
    private static final long PAGE_BYTES = 2L << 20;
    private static final int PAGES = 256;
    private static final String ECHO = "bench.mappath.echo.";
    private static final String SIM_KEY = "bench-mappath";

    private MapPathBench() {
    }

    public static void main(String[] args) throws Exception {
        int repeats = args.length > 0 ? Integer.parseInt(args[0]) : 500;
        int rounds = args.length > 1 ? Integer.parseInt(args[1]) : 5;
        int[] tps = args.length > 2 ? ints(args[2]) : new int[] {1, 4};
        int[] batches = args.length > 3 ? ints(args[3]) : new int[] {1, 16};
        Vertx vertx = Vertx.vertx();
        Map<String, Integer> sent = new TreeMap<>();
        boolean[] counting = {false};
        vertx.eventBus().addOutboundInterceptor(delivery -> {
            if (counting[0]) {
                String action = delivery.message().headers().get("action");
                synchronized (sent) {
                    sent.merge(action == null ? "(reply)" : action, 1, Integer::sum);
                }
            }
            delivery.next();
        });
        try {
            System.out.printf(Locale.ROOT, "PAGE_MAJOR, %d layers x %d buffers x 2 MiB per page id, sim latency off; medians of "
                    + "%d rounds x %d repeats, microseconds%n", LAYERS, KV_BUFFERS, rounds, repeats);
            System.out.println("| tp | batch | local floor map+unmap | bus floor | kvpager alloc | kvpager free+trim | kv total - floors "
                    + "| CPU per round: local floor / bus floor (one way) / kvpager | messages per alloc+free+trim |");
            System.out.println("| --- | --- | --- | --- | --- | --- | --- | --- | --- |");
            for (int tp : tps) {
                for (int batch : batches) {
                    LatencySamples floor = new LatencySamples();
                    LatencySamples bus = new LatencySamples();
                    LatencySamples alloc = new LatencySamples();
                    LatencySamples unmap = new LatencySamples();
                    long[] cpu = new long[3];
                    List<String> echoes = await(echoes(vertx, tp));
                    KvCache cache = await(KvCache.deploy(vertx, options("bench-mappath-tp" + tp + "-b" + batch, tp)));
                    try {
                        for (int round = 0; round < rounds; round++) {
                            boolean measured = round > 0;
                            long c0 = cpuNanos();
                            localFloor(tp, batch, repeats, measured ? floor : null);
                            long c1 = cpuNanos();
                            await(busFloor(vertx, tp, batch, repeats, measured ? bus : null));
                            long c2 = cpuNanos();
                            await(kvpager(vertx, cache, batch, repeats, measured ? alloc : null, measured ? unmap : null));
                            long c3 = cpuNanos();
                            if (measured) {
                                cpu[0] += c1 - c0;
                                cpu[1] += c2 - c1;
                                cpu[2] += c3 - c2;
                            }
                        }
                        sent.clear();
                        counting[0] = true;
                        await(kvpager(vertx, cache, batch, 10, null, null));
                        counting[0] = false;
                    } finally {
                        await(cache.close());
                        for (String id : echoes) {
                            await(vertx.undeploy(id));
                        }
                    }
                    double kvTotal = alloc.percentileMicros(50) + unmap.percentileMicros(50);
                    StringBuilder messages = new StringBuilder();
                    synchronized (sent) {
                        sent.forEach((action, n) -> messages.append(messages.isEmpty() ? "" : ", ").append(action)
                                .append(' ').append(String.format(Locale.ROOT, "%.1f", n / 10.0)));
                    }
                    double ops = (rounds - 1) * (double) repeats * 1_000;
                    System.out.printf(Locale.ROOT, "| %d | %d | %.1f | %.1f | %.1f | %.1f | %.1f | %.1f / %.1f / %.1f | %s |%n",
                            tp, batch, floor.percentileMicros(50), bus.percentileMicros(50), alloc.percentileMicros(50),
                            unmap.percentileMicros(50), kvTotal - floor.percentileMicros(50) - 2 * bus.percentileMicros(50),
                            cpu[0] / ops, cpu[1] / ops, cpu[2] / ops, messages);
                }
            }
        } finally {
            await(vertx.close());
        }
    }

    private static KvCacheOptions options(String instance, int tp) {
        return new KvCacheOptions().setInstance(instance).setTp(tp).setLayers(LAYERS).setKvBuffers(KV_BUFFERS)
                .setBlockBytes(PAGE_BYTES).setPageBytes(PAGE_BYTES).setPages(PAGES).setLayout(Layout.PAGE_MAJOR)
                .setReserveLow(0).setReserveHigh(0).setAdaptiveReserve(false).setRefillIntervalMs(3_600_000)
                .setSendTimeoutMs(60_000).setLocalWorkers(true).setDevice("sim")
                .setSim(SimOptions.defaults().withGpuKey(instance).withLatency(false));
    }

    /** Map then unmap {@code batch} page ids on {@code tp} local mappers, one rank after another, on this thread. */
    private static void localFloor(int tp, int batch, int repeats, LatencySamples samples) {
        Geometry geometry = new Geometry(LAYERS, KV_BUFFERS, PAGE_BYTES, PAGE_BYTES, PAGES, Layout.PAGE_MAJOR);
        SimOptions sim = new SimOptions(SimOptions.DEFAULT_CAPACITY_BYTES, SimOptions.DEFAULT_GRANULARITY, false, List.of(),
                SIM_KEY);
        List<SimDevice> devices = new ArrayList<>();
        List<LocalPageMapper> mappers = new ArrayList<>();
        try {
            for (int r = 0; r < tp; r++) {
                SimDevice device = new SimDeviceFactory().open(r, "pp0/tp" + r, sim);
                devices.add(device);
                device.attach();
                mappers.add(new LocalPageMapper(device, geometry));
            }
            int[] pages = new int[batch];
            for (int i = 0; i < batch; i++) {
                pages[i] = i;
            }
            for (int i = 0; i < repeats; i++) {
                long start = System.nanoTime();
                for (LocalPageMapper mapper : mappers) {
                    mapper.map(pages).toCompletableFuture().join();
                }
                for (LocalPageMapper mapper : mappers) {
                    mapper.unmap(pages).toCompletableFuture().join();
                }
                if (samples != null) {
                    samples.add(System.nanoTime() - start);
                }
            }
        } finally {
            mappers.forEach(LocalPageMapper::close);
            devices.forEach(SimDevice::close);
            SimGpus.reset(SIM_KEY);
        }
    }

    /** A joined request of one batch's page ids to {@code tp} echoes, from an event-loop context. */
    private static Future<Void> busFloor(Vertx vertx, int tp, int batch, int repeats, LatencySamples samples) {
        Promise<Void> done = Promise.promise();
        vertx.getOrCreateContext().runOnContext(v -> busStep(vertx, tp, batch, 0, repeats, samples, done));
        return done.future();
    }

    private static void busStep(Vertx vertx, int tp, int batch, int i, int repeats, LatencySamples samples, Promise<Void> done) {
        if (i == repeats) {
            done.complete();
            return;
        }
        long start = System.nanoTime();
        List<Future<?>> replies = new ArrayList<>(tp);
        for (int r = 0; r < tp; r++) {
            JsonArray pages = new JsonArray();
            for (int p = 0; p < batch; p++) {
                pages.add(p);
            }
            replies.add(vertx.eventBus().request(ECHO + r, new JsonObject().put("group", 0).put("pages", pages)
                    .put("requestId", "r" + i), new DeliveryOptions().addHeader("action", "map")));
        }
        Future.join(replies).onComplete(ar -> {
            if (ar.failed()) {
                done.fail(ar.cause());
                return;
            }
            if (samples != null) {
                samples.add(System.nanoTime() - start);
            }
            busStep(vertx, tp, batch, i + 1, repeats, samples, done);
        });
    }

    private static Future<List<String>> echoes(Vertx vertx, int tp) {
        List<Future<String>> all = new ArrayList<>();
        for (int r = 0; r < tp; r++) {
            String address = ECHO + r;
            all.add(vertx.deployVerticle(new VerticleBase() {
                @Override
                public Future<?> start() {
                    return vertx.eventBus().<JsonObject>consumer(address, m -> m.reply(new JsonObject()
                            .put("mapped", m.body().getJsonArray("pages")))).completion();
                }
            }, new DeploymentOptions().setThreadingModel(ThreadingModel.WORKER).setWorkerPoolName("bench-mappath-echo-" + r)
                    .setWorkerPoolSize(1)));
        }
        return Future.all(all).map(f -> {
            List<String> ids = new ArrayList<>();
            for (Future<String> id : all) {
                ids.add(id.result());
            }
            return ids;
        });
    }

    /** alloc, then free and trim, {@code repeats} times from an event-loop context of its own. */
    private static Future<Void> kvpager(Vertx vertx, KvCache cache, int batch, int repeats, LatencySamples alloc,
                                        LatencySamples unmap) {
        Promise<Void> done = Promise.promise();
        vertx.getOrCreateContext().runOnContext(v -> kvStep(cache, batch, 0, repeats, alloc, unmap, done));
        return done.future();
    }

    private static void kvStep(KvCache cache, int batch, int i, int repeats, LatencySamples alloc, LatencySamples unmap,
                               Promise<Void> done) {
        if (i == repeats) {
            done.complete();
            return;
        }
        long t0 = System.nanoTime();
        cache.alloc(batch).compose(allocation -> {
            long t1 = System.nanoTime();
            if (allocation.isMiss()) {
                return Future.failedFuture(new IllegalStateException("alloc(" + batch + ") missed: " + allocation));
            }
            return cache.free(allocation).compose(x -> cache.trim()).map(x -> {
                if (alloc != null) {
                    alloc.add(t1 - t0);
                    unmap.add(System.nanoTime() - t1);
                }
                return x;
            });
        }).onSuccess(x -> kvStep(cache, batch, i + 1, repeats, alloc, unmap, done)).onFailure(done::fail);
    }

    private static int[] ints(String list) {
        return java.util.Arrays.stream(list.split(",")).mapToInt(Integer::parseInt).toArray();
    }

    /** CPU time of the whole process, every thread: what one round trip costs the host, whatever the load. */
    private static long cpuNanos() {
        return ((com.sun.management.OperatingSystemMXBean) java.lang.management.ManagementFactory.getOperatingSystemMXBean())
                .getProcessCpuTime();
    }

    private static <T> T await(Future<T> future) throws Exception {
        return future.toCompletionStage().toCompletableFuture().get(10, TimeUnit.MINUTES);
    }
}
