package io.kvpager.cache;

import io.kvpager.internal.CoordinatorView;
import io.kvpager.sim.SimDevice;
import io.kvpager.sim.SimGpu;
import io.kvpager.sim.SimGpus;
import io.kvpager.sim.SimOptions;
import io.kvpager.worker.RankWorker;
import io.kvpager.worker.RankWorkerOptions;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.eventbus.DeliveryOptions;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * A cache on simulated GPUs for tests: each test names its own instance, which is also the sim's
 * {@code gpuKey}, so tests never share GPUs; rank {@code ppP/tpR} runs on GPU {@code P × tp + R}.
 */
public final class SimPool {

    /** Bytes of one block of one layer and buffer: 32 blocks per 2 MiB page. */
    public static final long BLOCK_BYTES = 64 << 10;
    public static final int BLOCKS_PER_PAGE = 32;
    public static final int PAGES = 16;
    /** One page id on one rank: 2 layers × 2 buffers × 2 MiB, one PAGE_MAJOR handle. */
    public static final long PAGE_ID_BYTES = 4 * (2L << 20);

    private SimPool() {
    }

    /** TP=4, no reserve, local workers on the sim. */
    public static KvCacheOptions options(String name) {
        return new KvCacheOptions().setInstance(name).setTp(4).setLayers(2).setKvBuffers(2).setBlockBytes(BLOCK_BYTES)
                .setPages(PAGES).setReserveLow(0).setReserveHigh(0).setAdaptiveReserve(false).setRefillIntervalMs(5)
                .setSendTimeoutMs(5_000).setTensorsDeadlineMs(5_000).setTensorsPollMs(5)
                .setLocalWorkers(true).setDevice("sim").setSim(sim(name));
    }

    public static SimOptions sim(String name) {
        return SimOptions.defaults().withGpuKey(name).withCapacityBytes(1L << 30);
    }

    /** Waits for a future from the test's thread, at most ten seconds. */
    public static <T> T await(Future<T> future) {
        try {
            return future.toCompletionStage().toCompletableFuture().get(10, TimeUnit.SECONDS);
        } catch (java.util.concurrent.ExecutionException e) {
            throw e.getCause() instanceof RuntimeException r ? r : new IllegalStateException(e.getCause());
        } catch (Exception e) {
            throw new IllegalStateException("gave up waiting: " + e, e);
        }
    }

    /** The failure of a future that must fail. */
    public static Throwable failure(Future<?> future) {
        try {
            future.toCompletionStage().toCompletableFuture().get(10, TimeUnit.SECONDS);
        } catch (java.util.concurrent.ExecutionException e) {
            return e.getCause();
        } catch (Exception e) {
            throw new IllegalStateException("gave up waiting: " + e, e);
        }
        throw new AssertionError("the future succeeded: " + future.result());
    }

    public static SimGpu gpu(String name, int index) {
        return SimGpus.gpu(name, index);
    }

    /** The open sim device of {@code rank} ({@code "pp0/tp2"}). */
    public static SimDevice device(String name, int gpu, String rank) {
        for (SimDevice d : gpu(name, gpu).devices()) {
            if (d.rank().equals(rank)) {
                return d;
            }
        }
        throw new AssertionError("no open device for " + rank + " on gpu " + gpu + " of " + name);
    }

    /** Checks the coordinator's ledger on its own context: every test's state must keep the ledger's invariants. */
    public static void invariantsHold(KvCache cache) {
        await(CoordinatorView.of(cache).invariantsHold());
    }

    /** Handles alive and bytes in use on each GPU, in GPU order: what a failed map must leave unchanged. */
    public static List<String> accounting(String name, int gpus) {
        List<String> out = new ArrayList<>();
        for (int i = 0; i < gpus; i++) {
            SimGpu g = gpu(name, i);
            out.add("gpu " + i + ": " + g.handlesAlive() + " handles, " + g.bytesInUse() + " bytes");
        }
        return out;
    }

    /** Deploys the worker of one rank the way a cache with local workers does. */
    public static Future<String> deployWorker(Vertx vertx, String name, int pp, int tp, int tpSize) {
        return RankWorker.deploy(vertx, new RankWorkerOptions().setInstance(name).setPp(pp).setTp(tp).setGpu(pp * tpSize + tp)
                .setSim(sim(name))).map(RankWorker::deploymentId);
    }

    public static Future<List<String>> deployWorkers(Vertx vertx, String name, int tpSize) {
        List<Future<String>> all = new ArrayList<>();
        for (int tp = 0; tp < tpSize; tp++) {
            all.add(deployWorker(vertx, name, 0, tp, tpSize));
        }
        return Future.all(all).map(done -> {
            List<String> ids = new ArrayList<>();
            all.forEach(f -> ids.add(f.result()));
            return ids;
        });
    }

    /** Sends one worker action straight to a rank, past the coordinator. */
    public static Future<JsonObject> toRank(Vertx vertx, String name, int pp, int tp, String action, JsonObject body) {
        return vertx.eventBus().<JsonObject>request("kvpager." + name + ".pp" + pp + ".tp" + tp, body,
                new DeliveryOptions().addHeader("action", action)).map(m -> m.body());
    }

    public static JsonObject pages(int group, String requestId, int... pages) {
        JsonArray ids = new JsonArray();
        for (int p : pages) {
            ids.add(p);
        }
        return new JsonObject().put("group", group).put("pages", ids).put("requestId", requestId);
    }
}
