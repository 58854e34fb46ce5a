package io.kvpager.harness.example;

import io.kvpager.Allocation;
import io.kvpager.cache.CacheStats;
import io.kvpager.cache.KvCache;
import io.kvpager.cache.KvCacheOptions;
import io.kvpager.cache.RankStats;
import io.kvpager.sim.SimOptions;
import io.kvpager.worker.RankWorker;
import io.kvpager.worker.RankWorkerOptions;
import io.vertx.core.Vertx;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * An embedder that runs its rank workers itself, one per GPU, with the public worker API only
 * ({@link RankWorker}, {@link RankWorkerOptions}), and a cache whose coordinator reaches them at
 * their event-bus addresses ({@code setLocalWorkers(false)}); in a cluster the workers would be
 * deployed the same way on the GPUs' own nodes. The README's "Deploying rank workers yourself", run
 * by the build (WorkerExampleTest). Run with {@code --enable-native-access=ALL-UNNAMED}.
 */
public final class WorkerExample {

    private WorkerExample() {
    }

    /** Runs the example; returns one line per rank: its address and the pages it maps. */
    public static List<String> run() throws Exception {
        Vertx vertx = Vertx.vertx();
        List<RankWorker> workers = new ArrayList<>();
        try {
            for (int tp = 0; tp < 2; tp++) {
                RankWorkerOptions options = new RankWorkerOptions().setInstance("llama-7b").setPp(0).setTp(tp)
                        .setDevice("sim").setGpu(tp)                               // "cuda" on a GPU
                        .setSim(SimOptions.defaults().withCapacityBytes(8L << 30));   // a simulated 8 GiB GPU
                workers.add(RankWorker.deploy(vertx, options).await(60, TimeUnit.SECONDS));
            }
            KvCache cache = KvCache.deploy(vertx, new KvCacheOptions().setInstance("llama-7b").setTp(2)
                    .setLayers(32).setKvBuffers(2).setBlockBytes(64 * 1024).setPages(256)
                    .setReserveLow(0).setReserveHigh(0).setAdaptiveReserve(false)   // no idle pages: each maps what alloc asked
                    .setLocalWorkers(false)).await(60, TimeUnit.SECONDS);
            try {
                Allocation allocation = cache.alloc(32).await(10, TimeUnit.SECONDS);
                if (allocation.isMiss()) {
                    throw new IllegalStateException("miss: " + allocation.missReason() + ": " + allocation.detail());
                }
                CacheStats stats = cache.stats().await(10, TimeUnit.SECONDS);
                List<String> lines = new ArrayList<>();
                for (RankWorker worker : workers) {
                    RankStats rank = stats.rank(worker.rank());
                    lines.add(worker.rank() + " at " + worker.address() + " maps " + rank.mappedPages() + " pages");
                }
                cache.free(allocation).await(10, TimeUnit.SECONDS);
                return lines;
            } finally {
                cache.close().await(30, TimeUnit.SECONDS);   // unmaps every page, destroys the tensors
            }
        } finally {
            for (RankWorker worker : workers) {
                worker.undeploy().await(30, TimeUnit.SECONDS);   // gives the rank's device back
            }
            vertx.close().await(30, TimeUnit.SECONDS);
        }
    }

    public static void main(String[] args) throws Exception {
        run().forEach(System.out::println);
    }
}
