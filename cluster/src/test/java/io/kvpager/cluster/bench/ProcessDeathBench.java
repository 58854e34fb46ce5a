package io.kvpager.cluster.bench;

import io.kvpager.cluster.ClusterNode;
import io.kvpager.cluster.process.CacheProcesses;
import io.kvpager.cluster.process.SpawnedNode;
import io.kvpager.cluster.process.TestClusters;
import io.kvpager.impl.worker.WorkerConfig;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import org.awaitility.Awaitility;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.CompletableFuture;

/**
 * What happens when a process of a TP=2 cache dies, measured from outside: coordinator or worker,
 * SIGKILL or SIGTERM, each {@code runs} times (default 5) on the cluster of {@link CacheProcesses}
 * (every rank and the coordinator a JVM of its own, simulated GPUs, the workers' default lease
 * grace). Each run holds 6 pages, stops the process, spawns its replacement at once (as a
 * supervisor would), and times from the signal: until the dead process's memory is back on every
 * GPU (a coordinator's: no rank holds a group of its owner; a worker's: its process has exited),
 * and until the first allocation that succeeds. Prints every run, then the medians.
 *
 * <pre>{@code
 * mvn -o -q -pl cluster -am test-compile dependency:build-classpath -Dmdep.outputFile=target/bench.classpath -Dmdep.includeScope=test
 * java -cp "cluster/target/test-classes:cluster/target/classes:$(cat cluster/target/bench.classpath)" \
 *     io.kvpager.cluster.bench.ProcessDeathBench [runs, default 5]
 * }</pre>
 */
public final class ProcessDeathBench {

    private static final Duration START = Duration.ofSeconds(120);
    private static final Duration BOUND = Duration.ofSeconds(60);

    private ProcessDeathBench() {
    }

    private enum Victim { COORDINATOR, WORKER }

    private enum Signal { SIGKILL, SIGTERM }

    /** One run: milliseconds from the signal to memory back, and to the first allocation served. */
    private record Run(long memoryBackMs, long firstAllocMs) {
    }

    public static void main(String[] args) {
        int runs = args.length > 0 ? Integer.parseInt(args[0]) : 5;
        ClusterNode here = TestClusters.startHere(TestClusters.freshName("kvpager-death-bench"));
        CacheProcesses cache = new CacheProcesses(here, "bench", WorkerConfig.DEFAULT_LEASE_GRACE_MS);
        List<String> table = new ArrayList<>();
        try {
            SpawnedNode[] workers = {cache.spawnWorker(0), cache.spawnWorker(1)};
            SpawnedNode coordinator = cache.spawnCoordinator();
            workers[0].awaitReady(START);
            workers[1].awaitReady(START);
            coordinator.awaitReady(START);
            for (Victim victim : Victim.values()) {
                for (Signal signal : Signal.values()) {
                    List<Run> results = new ArrayList<>();
                    for (int i = 0; i < runs; i++) {
                        List<JsonArray> held = hold(cache, 6);
                        Run run;
                        if (victim == Victim.COORDINATOR) {
                            SpawnedNode[] replaced = {coordinator};
                            run = coordinatorDies(cache, replaced, signal);
                            coordinator = replaced[0];
                        } else {
                            run = workerDies(cache, workers, signal);
                            // the coordinator lived on: what it handed out is still held
                            for (JsonArray blocks : held) {
                                TestClusters.await(cache.free(blocks));
                            }
                        }
                        results.add(run);
                        System.out.printf("%s %s run %d: memory back after %d ms, first allocation after %d ms%n",
                                victim, signal, i + 1, run.memoryBackMs(), run.firstAllocMs());
                        Awaitility.await().atMost(BOUND).until(() -> cache.disagreements().isEmpty());
                    }
                    table.add(String.format("| %s | %s | %d ms | %d ms |", victim.name().toLowerCase(), signal,
                            median(results.stream().mapToLong(Run::memoryBackMs).toArray()),
                            median(results.stream().mapToLong(Run::firstAllocMs).toArray())));
                }
            }
            System.out.println();
            System.out.println("medians of " + runs + " runs, from the signal:");
            System.out.println("| process | signal | memory back on every GPU | first successful alloc |");
            table.forEach(System.out::println);
        } finally {
            cache.close();
            TestClusters.await(here.close());
        }
        System.exit(0);
    }

    private static Run coordinatorDies(CacheProcesses cache, SpawnedNode[] coordinator, Signal signal) {
        String dead = cache.ownerOn(0);
        long signalled = System.nanoTime();
        // watched while the process stops: a stopping coordinator gives its memory back before it exits
        CompletableFuture<Long> memoryBack = CompletableFuture.supplyAsync(() -> {
            Awaitility.await().atMost(BOUND).pollDelay(Duration.ZERO).pollInterval(Duration.ofMillis(10))
                    .until(() -> !dead.equals(cache.ownerOn(0)) && !dead.equals(cache.ownerOn(1)));
            return sinceMs(signalled);
        });
        stop(coordinator[0], signal);
        coordinator[0] = cache.spawnCoordinator();
        coordinator[0].awaitReady(START);
        cache.untilAllocates(BOUND);
        long firstAlloc = sinceMs(signalled);
        return new Run(memoryBack.join(), firstAlloc);
    }

    /** Stops pp0/tp1; its memory is back once its process exited (the OS and the driver take a dead process's memory). */
    private static Run workerDies(CacheProcesses cache, SpawnedNode[] workers, Signal signal) {
        long signalled = stop(workers[1], signal);
        long exited = sinceMs(signalled);
        workers[1] = cache.spawnWorker(1);
        cache.untilAllocates(BOUND);
        return new Run(exited, sinceMs(signalled));
    }

    /** Sends the signal and waits until the process is gone; the time it was sent. */
    private static long stop(SpawnedNode node, Signal signal) {
        long signalled = System.nanoTime();
        if (signal == Signal.SIGKILL) {
            node.kill();
        } else {
            node.terminateAndWait();
        }
        return signalled;
    }

    /** Allocates {@code pages} page ids' blocks; the blocks of each allocation. */
    private static List<JsonArray> hold(CacheProcesses cache, int pages) {
        List<JsonArray> held = new ArrayList<>();
        for (int i = 0; i < pages; i++) {
            JsonObject answer = TestClusters.await(cache.alloc(CacheProcesses.BLOCKS_PER_PAGE));
            if (!answer.containsKey("blocks")) {
                throw new IllegalStateException("the cache did not serve an allocation: " + answer.encode());
            }
            held.add(answer.getJsonArray("blocks"));
        }
        return held;
    }

    private static long sinceMs(long nanos) {
        return (System.nanoTime() - nanos) / 1_000_000;
    }

    private static long median(long[] values) {
        long[] sorted = values.clone();
        Arrays.sort(sorted);
        return sorted[sorted.length / 2];
    }
}
