package io.kvpager.core.bench;

import io.kvpager.Allocation;
import io.kvpager.Geometry;
import io.kvpager.Layout;
import io.kvpager.core.PageLedger;
import io.kvpager.core.PageMapper;
import io.kvpager.core.ReserveMarks;
import java.util.SplittableRandom;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.AuxCounters;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OperationsPerInvocation;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.Warmup;

/**
 * The ledger's hot path on one thread: {@code alloc} and {@code free} with a mapper that always
 * succeeds at once, so that pages come from the reserve and the cost measured is the ledger's own.
 * Scores are block allocations plus frees per second: {@code allocFree1} and {@code allocFree16}
 * allocate and free {@code k} blocks (one score unit = one block allocated and freed);
 * {@code churn} keeps 256 sequences of 1 to 32 blocks alive and replaces the oldest each time, so
 * that best fit works across many partly used pages; its {@code blocks} counter is the block rate.
 * All three start with those 256 sequences alive, so {@code allocFree1} and {@code allocFree16}
 * take their blocks from a partly used page, as an engine's steady state does.
 *
 * <p>Run: {@code mvn -o -q -pl modules/core test-compile exec:exec -Djmh.args="AllocFreeBenchmark -f 1 -wi 2 -i 3"}.
 */
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.SECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(1)
@State(Scope.Thread)
public class AllocFreeBenchmark {

    /** Answers every map and unmap at once, with one shared completed stage. */
    private static final class InstantMapper implements PageMapper {
        private static final CompletionStage<Void> DONE = CompletableFuture.completedFuture(null);

        @Override
        public CompletionStage<Void> map(int[] pages) {
            return DONE;
        }

        @Override
        public CompletionStage<Void> unmap(int[] pages) {
            return DONE;
        }
    }

    private static final int LIVE = 256;

    private PageLedger ledger;
    private final int[] one = new int[1];
    private final int[] sixteen = new int[16];
    private int[][] live;
    private int oldest;
    private int[] sizes;
    private int next;

    /** Blocks allocated and freed by {@link #churn}; JMH reports it as a rate. */
    @State(Scope.Thread)
    @AuxCounters(AuxCounters.Type.OPERATIONS)
    public static class Blocks {
        public long blocks;

        @Setup(Level.Iteration)
        public void reset() {
            blocks = 0;
        }
    }

    @Setup(Level.Trial)
    public void setUp() {
        // 32 layers × K and V, 32 KiB blocks, 2 MiB pages: 64 blocks per page id, 1024 page ids.
        Geometry geometry = Geometry.of(32, 2, 32 * 1024, 1024, Layout.PAGE_MAJOR);
        ledger = new PageLedger(geometry, new InstantMapper(), ReserveMarks.fixed(2, 8));
        SplittableRandom random = new SplittableRandom(42);
        sizes = new int[4096];
        for (int i = 0; i < sizes.length; i++) {
            sizes[i] = 1 + random.nextInt(32);
        }
        live = new int[LIVE][];
        for (int i = 0; i < LIVE; i++) {
            live[i] = take(sizes[next++ & (sizes.length - 1)]).blocks();
        }
    }

    private Allocation take(int n) {
        Allocation allocation = ledger.alloc(n).toCompletableFuture().getNow(null);
        if (allocation == null || allocation.isMiss()) {
            throw new IllegalStateException("alloc(" + n + ") did not complete at once: " + allocation);
        }
        return allocation;
    }

    @Benchmark
    @OperationsPerInvocation(1)
    public void allocFree1() {
        one[0] = take(1).block(0);
        ledger.free(one);
    }

    @Benchmark
    @OperationsPerInvocation(16)
    public void allocFree16() {
        Allocation allocation = take(16);
        for (int i = 0; i < 16; i++) {
            sixteen[i] = allocation.block(i);
        }
        ledger.free(sixteen);
    }

    @Benchmark
    public void churn(Blocks counter) {
        int[] gone = live[oldest];
        ledger.free(gone);
        int n = sizes[next++ & (sizes.length - 1)];
        live[oldest] = take(n).blocks();
        oldest = (oldest + 1) % LIVE;
        counter.blocks += n;
    }
}
