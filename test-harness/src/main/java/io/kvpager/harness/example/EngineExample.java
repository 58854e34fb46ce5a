package io.kvpager.harness.example;

import io.kvpager.Allocation;
import io.kvpager.Layout;
import io.kvpager.LimitResult;
import io.kvpager.cache.CacheStats;
import io.kvpager.cache.KvCache;
import io.kvpager.cache.KvCacheOptions;
import io.kvpager.cache.RankViews;
import io.kvpager.sim.SimOptions;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.List;

/**
 * The lifecycle of docs/engine-guide.md, end to end, as a small engine would run it: deploy a
 * cache, read the views its kernels would use, then a few decode steps, each under a batch fence,
 * growing sequences block by block, preempting on a miss, freeing finished sequences; a limit
 * change; close. Runs on the simulated device by default ({@code --device cuda} for a GPU).
 *
 * <p>The build runs it (EngineExampleTest), so the guide's code cannot rot.
 */
public final class EngineExample {

    /** What a run saw, for the caller (and the test) to check. */
    public record Outcome(List<RankViews> views, int steps, long allocations, long misses, int finished, LimitResult limit,
                          CacheStats last) {
    }

    private static final int TOKENS_PER_BLOCK = 16;

    private final Vertx vertx;
    private final String device;

    public EngineExample(Vertx vertx, String device) {
        this.vertx = vertx;
        this.device = device;
    }

    public static void main(String[] args) throws Exception {
        String device = args.length > 1 && args[0].equals("--device") ? args[1] : "sim";
        Vertx vertx = Vertx.vertx();
        try {
            Outcome outcome = new EngineExample(vertx, device).run("engine-example", 40)
                    .toCompletionStage().toCompletableFuture().get();
            System.out.println(outcome);
        } finally {
            vertx.close().toCompletionStage().toCompletableFuture().get();
        }
    }

    /** Deploys, serves {@code steps} decode steps of a small workload, changes the limit, closes. */
    public Future<Outcome> run(String instance, int steps) {
        KvCacheOptions options = new KvCacheOptions()
                .setInstance(instance).setTp(2)
                .setLayers(8).setKvBuffers(2).setBlockBytes(64 * 1024).setPages(64)
                .setLayout(Layout.PAGE_MAJOR)
                .setLocalWorkers(true).setDevice(device)
                .setSim(SimOptions.defaults().withGpuKey(instance).withCapacityBytes(4L << 30));
        // views: per rank, each (layer, buffer)'s address range and strides, what the attention kernels read
        return KvCache.deploy(vertx, options).compose(cache -> cache.views()
                .compose(views -> serve(cache, steps)
                        .compose(served -> cache.setMemoryLimit(16L * options.geometry().bytesPerPageId(), 1)
                                .compose(limit -> cache.stats().map(stats -> new Outcome(views, steps, served.allocations,
                                        served.misses, served.finished, limit, stats)))))
                .eventually(cache::close));
    }

    /** A sequence being decoded: its blocks, and tokens until it needs another one. */
    private static final class Sequence {
        final List<Integer> blocks = new ArrayList<>();
        int tokens;
        final int length;

        Sequence(int length) {
            this.length = length;
        }
    }

    private static final class Serving {
        final Deque<Sequence> waiting = new ArrayDeque<>();
        final List<Sequence> running = new ArrayList<>();
        long allocations;
        long misses;
        int finished;
    }

    private Future<Serving> serve(KvCache cache, int steps) {
        Serving serving = new Serving();
        for (int i = 0; i < 24; i++) {
            serving.waiting.add(new Sequence(64 + 37 * i % 400));
        }
        Future<Void> chain = Future.succeededFuture();
        for (int s = 0; s < steps; s++) {
            chain = chain.compose(v -> step(cache, serving));
        }
        // Whatever still runs at the end is finished off and freed.
        return chain.compose(v -> {
            List<Future<Void>> frees = new ArrayList<>();
            for (Sequence sequence : serving.running) {
                frees.add(cache.free(sequence.blocks));
            }
            serving.running.clear();
            return Future.all(frees).map(serving);
        });
    }

    /**
     * One decode step: admit waiting sequences, give every running sequence the block its next
     * token needs (a miss preempts the sequence: its blocks go back and it waits again), "run the
     * batch" under a fence, free finished sequences, retire the fence.
     */
    private Future<Void> step(KvCache cache, Serving serving) {
        while (serving.running.size() < 8 && !serving.waiting.isEmpty()) {
            serving.running.add(serving.waiting.poll());
        }
        return cache.fence().compose(fence -> {
            Future<Void> grown = Future.succeededFuture();
            for (Sequence sequence : List.copyOf(serving.running)) {
                grown = grown.compose(v -> grow(cache, serving, sequence));
            }
            return grown.compose(v -> freeFinished(cache, serving)).compose(v -> cache.retired(fence));
        });
    }

    /** Frees the sequences that reached their length: under the step's fence, so their pages stay mapped until it retires. */
    private Future<Void> freeFinished(KvCache cache, Serving serving) {
        List<Future<Void>> frees = new ArrayList<>();
        for (Sequence sequence : List.copyOf(serving.running)) {
            if (sequence.tokens >= sequence.length) {
                serving.running.remove(sequence);
                serving.finished++;
                frees.add(cache.free(sequence.blocks));
            }
        }
        return Future.all(frees).mapEmpty();
    }

    private Future<Void> grow(KvCache cache, Serving serving, Sequence sequence) {
        sequence.tokens += TOKENS_PER_BLOCK;
        if (sequence.blocks.size() * TOKENS_PER_BLOCK >= sequence.tokens) {
            return Future.succeededFuture();
        }
        return cache.alloc(1).compose(allocation -> {
            serving.allocations++;
            if (!allocation.isMiss()) {
                sequence.blocks.add(allocation.block(0));
                return Future.<Void>succeededFuture();
            }
            serving.misses++;
            return preempt(cache, serving, sequence, allocation);
        });
    }

    private static Future<Void> preempt(KvCache cache, Serving serving, Sequence sequence, Allocation miss) {
        serving.running.remove(sequence);
        Future<Void> freed = sequence.blocks.isEmpty() ? Future.succeededFuture() : cache.free(sequence.blocks);
        sequence.blocks.clear();
        sequence.tokens = 0;
        serving.waiting.addFirst(sequence);
        return freed;
    }

}
