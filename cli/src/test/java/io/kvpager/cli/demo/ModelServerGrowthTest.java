package io.kvpager.cli.demo;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import io.kvpager.Allocation;
import io.kvpager.LimitResult;
import io.kvpager.cache.CacheStats;
import io.kvpager.cache.KvCache;
import io.kvpager.cache.KvCacheOptions;
import io.kvpager.cache.RankViews;
import io.kvpager.cache.Reclaim;
import io.vertx.core.Context;
import io.vertx.core.Future;
import io.vertx.core.Handler;
import io.vertx.core.Promise;
import io.vertx.core.Vertx;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The demo's engine when a running request's next block is refused: it sits the step out, keeping
 * its KV, and only refused {@link ModelServer#GROWTH_WAIT_STEPS} steps in a row is a request
 * preempted, its KV counted as recomputed. And when its cache asks it to give back: it stops
 * admitting, lets its finishing requests empty the pages, and preempts only what they have not
 * given back by half the deadline.
 */
class ModelServerGrowthTest {

    private static final long STEP_MS = 20;

    private Vertx vertx;
    private Context context;
    private final AtomicLong clock = new AtomicLong();

    @BeforeEach
    void start() {
        vertx = Vertx.vertx();
        context = vertx.getOrCreateContext();
    }

    @AfterEach
    void stop() throws Exception {
        System.clearProperty(ModelServer.TURNOVER_PROPERTY);
        vertx.close().toCompletionStage().toCompletableFuture().get(10, TimeUnit.SECONDS);
    }

    /** One request of 31 prompt tokens: admitted into 2 blocks, its 33rd token needs a 3rd block (at step 2). */
    private ModelServer server(BlockBudget cache) {
        TraceRequest request = new TraceRequest(1, 0, 0, 31, 10);
        return new ModelServer(ModelProfile.SEVEN_B, cache, context, STEP_MS, 4, List.of(request), clock::get,
                new ServiceTargets(Duration.ofSeconds(1), Duration.ofMillis(100)));
    }

    private ModelServer server(BlockBudget cache, TraceRequest... requests) throws Exception {
        ModelServer server = new ModelServer(ModelProfile.SEVEN_B, cache, context, STEP_MS, 4, List.of(requests), clock::get,
                new ServiceTargets(Duration.ofSeconds(1), Duration.ofMillis(100)));
        onContext(server::answerReclaims);
        return server;
    }

    private void onContext(Runnable action) throws Exception {
        CompletableFuture<Void> done = new CompletableFuture<>();
        context.runOnContext(v -> {
            action.run();
            done.complete(null);
        });
        done.get(10, TimeUnit.SECONDS);
    }

    private void step(ModelServer server, long step) throws Exception {
        clock.set(step * STEP_MS);
        CompletableFuture<Void> done = new CompletableFuture<>();
        context.runOnContext(v -> server.step(step * STEP_MS).onComplete(ar -> {
            if (ar.succeeded()) {
                done.complete(null);
            } else {
                done.completeExceptionally(ar.cause());
            }
        }));
        done.get(10, TimeUnit.SECONDS);
    }

    @Test
    void aRefusedBlockSitsOutThenPreemptsOnTheThirdRefusalInARow() throws Exception {
        BlockBudget cache = new BlockBudget(2);
        ModelServer server = server(cache);
        step(server, 0); // admitted, prefilled
        step(server, 1); // first token, within its 2 blocks
        for (long s = 2; s < 1 + ModelServer.GROWTH_WAIT_STEPS; s++) {
            step(server, s);
            assertThat(server.preemptions()).as("after step %d", s).isZero();
            assertThat(server.running()).isEqualTo(1);
            assertThat(server.blocksHeld()).isEqualTo(2);
        }
        assertThat(server.tokens()).isEqualTo(1);
        step(server, 1 + ModelServer.GROWTH_WAIT_STEPS);
        assertThat(server.preemptions()).isEqualTo(1);
        assertThat(server.running()).isZero();
        assertThat(server.blocksHeld()).isZero();
        assertThat(cache.used).isZero();
        // its prompt and its first token were in the cache: computed again on its next turn
        assertThat(server.recomputedTokens()).isEqualTo(32);
        assertThat(server.satOutRequestSteps()).isEqualTo(ModelServer.GROWTH_WAIT_STEPS - 1);
    }

    @Test
    void theMemoryAccountSeesWhatAPreemptionThrowsAwayAndItsPrefillAgain() throws Exception {
        BlockBudget cache = new BlockBudget(2);
        ModelServer server = server(cache);
        step(server, 0);
        step(server, 1); // 32 tokens of KV written
        MemoryAccount.Engine[] seen = new MemoryAccount.Engine[1];
        onContext(() -> seen[0] = server.memoryNow(20));
        assertThat(seen[0]).isEqualTo(new MemoryAccount.Engine(32, 2, MemoryAccount.Wait.NONE, 0));
        step(server, 2); // refused: sits out, waiting for memory
        onContext(() -> seen[0] = server.memoryNow(60));
        assertThat(seen[0].waits()).isEqualTo(MemoryAccount.Wait.REFUSED);
        step(server, 3);
        step(server, 4); // preempted: 32 tokens held for 40 ms thrown away
        onContext(() -> seen[0] = server.memoryNow(80));
        assertThat(seen[0].writtenTokens()).isZero();
        assertThat(seen[0].thrownTokenSeconds()).isCloseTo(32 * 0.04, within(1e-9));
        cache.budget = 3;
        long retry = 4 + ModelServer.RETRY_STEPS;
        step(server, retry); // admitted again: its prompt and first token prefilled again
        assertThat(server.prefillFirstTokens()).isEqualTo(31);
        assertThat(server.prefillAgainTokens()).isEqualTo(32);
        step(server, retry + 1);
        assertThat(server.tokens()).isEqualTo(2);
    }

    @Test
    void aRequestThatSatOutDecodesOnOnceTheBlockComes() throws Exception {
        BlockBudget cache = new BlockBudget(2);
        ModelServer server = server(cache);
        step(server, 0);
        step(server, 1);
        step(server, 2); // refused: sits out
        assertThat(server.tokens()).isEqualTo(1);
        cache.budget = 3;
        step(server, 3);
        assertThat(server.tokens()).isEqualTo(2);
        assertThat(server.blocksHeld()).isEqualTo(3);
        assertThat(server.preemptions()).isZero();
        assertThat(server.recomputedTokens()).isZero();
    }

    @Test
    void byDefaultAReclaimIsAnsweredAtTheNextStepByPreempting() throws Exception {
        BlockBudget cache = new BlockBudget(100);
        // a in blocks 0..3 (page 0 of 4 blocks), b in page 1, both decoding long after
        ModelServer server = server(cache, new TraceRequest(1, 0, 0, 62, 40), new TraceRequest(2, 0, 0, 31, 40));
        step(server, 0);
        step(server, 1);
        assertThat(server.running()).isEqualTo(2);
        onContext(() -> cache.reclaims.handle(new Reclaim(4, 250, "test: one page")));
        step(server, 2);
        assertThat(server.running()).isEqualTo(1);
        assertThat(server.reclaimPreemptions()).as("preempted at the next step, not left to a turnover").isEqualTo(1);
        assertThat(server.reclaims()).isEqualTo(1);
    }

    @Test
    void aReclaimLeftToTurnoverIsAnsweredByTheRequestsThatFinishWithoutPreemptingAndHoldsAdmissionMeanwhile() throws Exception {
        System.setProperty(ModelServer.TURNOVER_PROPERTY, "50");
        BlockBudget cache = new BlockBudget(100);
        // a: 62 prompt tokens and 2 output tokens, in blocks 0..3 (page 0 of 4 blocks), done at step 2;
        // b: in blocks 4.. (page 1), decoding long after; c arrives while the reclaim is open
        ModelServer server = server(cache, new TraceRequest(1, 0, 0, 62, 2), new TraceRequest(2, 0, 0, 31, 40),
                new TraceRequest(3, 0, 2 * STEP_MS, 31, 40));
        step(server, 0);
        step(server, 1);
        assertThat(server.running()).isEqualTo(2);
        onContext(() -> cache.reclaims.handle(new Reclaim(4, 250, "test: one page")));
        step(server, 2);
        assertThat(server.running()).as("a finished, c not admitted while the reclaim is open").isEqualTo(1);
        step(server, 3);
        assertThat(server.running()).as("a's page emptied: answered, c admitted").isEqualTo(2);
        assertThat(server.reclaims()).isEqualTo(1);
        assertThat(server.preemptions()).isZero();
        assertThat(server.reclaimPreemptions()).isZero();
        assertThat(server.recomputedTokens()).isZero();
    }

    @Test
    void withHalfTheDeadlineLeftToTurnoverWhatTheFinishingRequestsDoNotGiveBackIsPreemptedThen() throws Exception {
        System.setProperty(ModelServer.TURNOVER_PROPERTY, "50");
        BlockBudget cache = new BlockBudget(100);
        ModelServer server = server(cache, new TraceRequest(1, 0, 0, 31, 40));
        step(server, 0);
        step(server, 1);
        long deadlineMs = 100;
        // asked at 20 ms: preempted from half the deadline, 70 ms, so at step 4
        onContext(() -> cache.reclaims.handle(new Reclaim(4, deadlineMs, "test: one page")));
        for (long s = 2; s <= 3; s++) {
            step(server, s);
            assertThat(server.running()).as("before half the deadline, turnover has its chance").isEqualTo(1);
            assertThat(server.reclaimPreemptions()).isZero();
        }
        step(server, 4);
        assertThat(server.reclaimPreemptions()).isEqualTo(1);
        assertThat(server.running()).isZero();
        assertThat(server.blocksHeld()).isZero();
        assertThat(cache.used).isZero();
        // its prompt and the 3 tokens decoded by step 3 were in the cache: computed again on its next turn
        assertThat(server.recomputedTokens()).isEqualTo(34);
    }

    @Test
    void aDrainWaitsForTheAdmissionThatAnAdmissionServedAtOnceStarted() throws Exception {
        BlockBudget cache = new BlockBudget(100);
        // a's admission is served at once (in the call) and starts b's, which the cache answers later
        ModelServer server = server(cache, new TraceRequest(1, 0, 0, 31, 40), new TraceRequest(2, 0, 0, 31, 40));
        Promise<Void> answerLater = Promise.promise();
        cache.allocsAtOnce = 1;
        cache.later = answerLater.future();
        step(server, 0);
        assertThat(server.running()).isEqualTo(1);
        CompletableFuture<Void> drained = new CompletableFuture<>();
        onContext(() -> server.drain().onComplete(ar -> drained.complete(null)));
        onContext(() -> { });
        assertThat(drained).as("drained before the admission in flight landed").isNotDone();
        onContext(() -> answerLater.complete());
        drained.get(10, TimeUnit.SECONDS);
        // b's blocks, handed out after the drain began, went back: nothing is left held
        assertThat(cache.used).isZero();
        assertThat(server.blocksHeld()).isZero();
    }

    /** A cache of {@code budget} blocks that refuses, as the GPU's broker does, what does not fit. */
    private static final class BlockBudget implements KvCache {
        int budget;
        int used;
        Handler<Reclaim> reclaims = r -> { };
        /** How many allocations answer in the call; the ones after wait for {@link #later}. */
        int allocsAtOnce = Integer.MAX_VALUE;
        Future<Void> later = Future.succeededFuture();
        private int nextBlock;
        private long fences;

        BlockBudget(int budget) {
            this.budget = budget;
        }

        @Override
        public Future<Allocation> alloc(int blocks) {
            if (allocsAtOnce-- <= 0) {
                return later.compose(v -> allocNow(blocks));
            }
            return allocNow(blocks);
        }

        private Future<Allocation> allocNow(int blocks) {
            if (used + blocks > budget) {
                return Future.succeededFuture(Allocation.gpuShareMiss("the other pools hold the GPU"));
            }
            int[] ids = new int[blocks];
            for (int i = 0; i < blocks; i++) {
                ids[i] = nextBlock++;
            }
            used += blocks;
            return Future.succeededFuture(Allocation.of(ids));
        }

        @Override
        public Future<Allocation> alloc(int blocks, int near) {
            return alloc(blocks);
        }

        @Override
        public Future<Void> free(List<Integer> blockIds) {
            used -= blockIds.size();
            return Future.succeededFuture();
        }

        @Override
        public Future<Void> free(Allocation allocation) {
            used -= allocation.size();
            return Future.succeededFuture();
        }

        @Override
        public Future<Long> fence() {
            return Future.succeededFuture(++fences);
        }

        @Override
        public Future<Void> retired(long fence) {
            return Future.succeededFuture();
        }

        @Override
        public KvCacheOptions options() {
            throw new UnsupportedOperationException();
        }

        @Override
        public Context context() {
            throw new UnsupportedOperationException();
        }

        @Override
        public Future<Integer> availableBlocks() {
            return Future.succeededFuture(budget - used);
        }

        @Override
        public Future<LimitResult> setMemoryLimit(long bytes, long revision) {
            throw new UnsupportedOperationException();
        }

        @Override
        public Future<LimitResult> setMemoryLimit(long bytes) {
            throw new UnsupportedOperationException();
        }

        @Override
        public Future<List<RankViews>> views() {
            throw new UnsupportedOperationException();
        }

        @Override
        public Future<CacheStats> stats() {
            throw new UnsupportedOperationException();
        }

        @Override
        public KvCache reclaimHandler(Handler<Reclaim> handler) {
            reclaims = handler;
            return this;
        }

        @Override
        public Future<Void> trim() {
            return Future.succeededFuture();
        }

        @Override
        public Future<Void> close() {
            return Future.succeededFuture();
        }
    }
}
