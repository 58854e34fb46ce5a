package io.kvpager.harness.example;

import static org.assertj.core.api.Assertions.assertThat;

import io.kvpager.LimitResult;
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
            assertThat(outcome.views()).as("one view per layer and buffer").isEqualTo(16);
            assertThat(outcome.allocations()).isPositive();
            assertThat(outcome.finished()).isPositive();
            assertThat(outcome.limit().outcome()).isIn(LimitResult.Outcome.APPLIED, LimitResult.Outcome.DEFERRED);
            assertThat(outcome.last().pool().usedBlocks()).as("every sequence freed").isZero();
        } finally {
            vertx.close().toCompletionStage().toCompletableFuture().get(30, TimeUnit.SECONDS);
        }
    }
}
