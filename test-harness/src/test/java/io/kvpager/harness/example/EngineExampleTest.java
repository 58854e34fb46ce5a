package io.kvpager.harness.example;

import static org.assertj.core.api.Assertions.assertThat;

import io.kvpager.LimitResult;
import io.kvpager.cache.BufferView;
import io.kvpager.cache.RankViews;
import io.vertx.core.Vertx;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/** Runs the engine guide's example, so that the guide's lifecycle keeps working. */
class EngineExampleTest {

    @Test
    void theGuidesLifecycleRunsOnTheSimulatedDevice() throws Exception {
        Vertx vertx = Vertx.vertx();
        try {
            EngineExample.Outcome outcome = new EngineExample(vertx, "sim").run("engine-guide", 40)
                    .toCompletionStage().toCompletableFuture().get(60, TimeUnit.SECONDS);
            assertThat(outcome.views()).extracting(RankViews::rank).containsExactly("pp0/tp0", "pp0/tp1");
            for (RankViews rank : outcome.views()) {
                assertThat(rank.buffers()).as("one view per layer and buffer").hasSize(16);
                BufferView last = rank.buffer(7, 1);
                assertThat(last.blockAddress(last.blockCount() - 1) + last.blockBytes()).isEqualTo(last.end());
                assertThat(last.end() - rank.buffer(0, 0).address()).as("the rank's whole range: 64 page ids of 16 tensors")
                        .isEqualTo(64L * 16 * 32 * 64 * 1024);
            }
            assertThat(outcome.allocations()).isPositive();
            assertThat(outcome.finished()).isPositive();
            assertThat(outcome.limit().outcome()).isIn(LimitResult.Outcome.APPLIED, LimitResult.Outcome.DEFERRED);
            assertThat(outcome.last().pool().usedBlocks()).as("every sequence freed").isZero();
        } finally {
            vertx.close().toCompletionStage().toCompletableFuture().get(30, TimeUnit.SECONDS);
        }
    }
}
