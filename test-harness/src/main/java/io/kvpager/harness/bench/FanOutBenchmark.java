package io.kvpager.harness.bench;

import io.kvpager.Allocation;
import io.kvpager.Geometry;
import io.kvpager.Layout;
import io.kvpager.cache.KvCache;
import io.kvpager.cache.KvCacheOptions;
import io.kvpager.device.LocalPageMapper;
import io.kvpager.core.PageLedger;
import io.kvpager.core.ReserveMarks;
import io.kvpager.harness.SimRanks;
import io.kvpager.internal.CoordinatorView;
import io.kvpager.sim.SimDevice;
import io.kvpager.sim.SimGpu;
import io.vertx.core.Context;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.Vertx;
import io.vertx.core.json.JsonObject;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OperationsPerInvocation;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Warmup;
import org.openjdk.jmh.infra.BenchmarkParams;

import java.util.concurrent.TimeUnit;

/**
 * What the event-bus fan-out costs on top of the driver work it carries: one operation maps
 * {@code pages} page ids on every one of {@code tp} ranks and unmaps them again, on simulated
 * devices without the latency model, so that what is measured is kvpager's own path.
 *
 * <ul>
 * <li>{@link #fanOut}: a cache with its reserve off, called on its coordinator's event loop (as
 *     code running there calls it, without a hop between threads): {@code alloc} of {@code pages}
 *     pages' worth of blocks (one map batch to every rank worker over the local event bus, each
 *     worker on its own thread), {@code free}, and {@code trim} (one unmap batch to every
 *     rank).</li>
 * <li>{@link #floor}: the same ledger operations with a mapper that makes the same driver calls
 *     on {@code tp} simulated devices one after the other in the calling thread, through
 *     {@link LocalPageMapper} (the device-side code each rank worker runs): no event bus, no
 *     threads, no JSON.</li>
 * </ul>
 *
 * <p>A sample is the time of one {@code alloc + free + trim} (each invocation runs {@value #OPS}
 * of them one after the other); the ratio of the two medians is the fan-out's cost against doing
 * the same work inline. Medians, because on a shared machine a descheduled thread puts outliers
 * of milliseconds into any mean. {@link FanOutBench} runs both and prints the ratios.
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.SampleTime)
@OutputTimeUnit(TimeUnit.MICROSECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(1)
public class FanOutBenchmark {

    static final int OPS = 8;
    static final int BLOCKS_PER_PAGE = 4;
    static final int POOL_PAGES = 256;

    @Param({"1", "2", "4", "8"})
    public int tp;

    @Param({"1", "16", "256"})
    public int pages;

    @Param({"PAGE_MAJOR"})
    public Layout layout;

    private int blocks;
    // the fan-out
    private Vertx vertx;
    private SimRanks ranks;
    private KvCache cache;
    private Context coordinator;
    // the floor
    private SimDevice[] devices;
    private LocalPageMapper[] mappers;
    private PageLedger ledger;

    private Geometry geometry() {
        return new Geometry(2, 2, (2L << 20) / BLOCKS_PER_PAGE, 2L << 20, POOL_PAGES, layout);
    }

    @Setup(Level.Trial)
    public void setUp(BenchmarkParams params) {
        blocks = pages * BLOCKS_PER_PAGE;
        if (params.getBenchmark().endsWith(".fanOut")) {
            String instance = "fanout-" + tp + "-" + pages;
            vertx = Vertx.vertx();
            ranks = join(SimRanks.deploy(vertx, instance, tp, new JsonObject()));
            cache = join(KvCache.deploy(vertx, new KvCacheOptions().setInstance(instance).setTp(tp).setLayers(2)
                    .setKvBuffers(2).setBlockBytes(geometry().blockBytes()).setPages(POOL_PAGES).setLayout(layout)
                    .setReserveLow(0).setReserveHigh(0).setAdaptiveReserve(false).setRefillIntervalMs(600_000)));
            coordinator = CoordinatorView.of(cache).context();
        } else {
            devices = new SimDevice[tp];
            mappers = new LocalPageMapper[tp];
            for (int r = 0; r < tp; r++) {
                devices[r] = new SimGpu(141L << 30, 2L << 20).open("pp0/tp" + r);
                mappers[r] = new LocalPageMapper(devices[r], geometry());
            }
            ledger = new PageLedger(geometry(), new RankByRankMapper(mappers), new ReserveMarks(0, 0, false));
        }
    }

    @Benchmark
    @OperationsPerInvocation(OPS)
    public Allocation fanOut() {
        Promise<Allocation> done = Promise.promise();
        coordinator.runOnContext(v -> cycles(OPS, null).onComplete(done));
        return join(done.future());
    }

    /** {@code left} cycles of alloc, free and trim, each after the last. */
    private Future<Allocation> cycles(int left, Allocation last) {
        if (left == 0) {
            return Future.succeededFuture(last);
        }
        return cache.alloc(blocks).compose(a -> {
            if (a.isMiss()) {
                return Future.failedFuture(new IllegalStateException("the fan-out missed: " + a));
            }
            return cache.free(a).compose(v -> cache.trim()).compose(v -> cycles(left - 1, a));
        });
    }

    @Benchmark
    @OperationsPerInvocation(OPS)
    public Allocation floor() {
        Allocation a = null;
        for (int i = 0; i < OPS; i++) {
            a = ledger.alloc(blocks).toCompletableFuture().join();
            if (a.isMiss()) {
                throw new IllegalStateException("the floor missed: " + a);
            }
            ledger.free(a.blocks());
            ledger.trim().toCompletableFuture().join();
        }
        return a;
    }

    @TearDown(Level.Trial)
    public void tearDown() {
        if (cache != null) {
            join(cache.close());
            join(ranks.close());
            ranks.forgetGpus();
            join(vertx.close());
        }
        if (mappers != null) {
            for (int r = 0; r < tp; r++) {
                mappers[r].close();
                devices[r].close();
            }
        }
    }

    private static <T> T join(Future<T> future) {
        return future.toCompletionStage().toCompletableFuture().join();
    }
}
