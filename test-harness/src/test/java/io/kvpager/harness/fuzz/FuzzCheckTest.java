package io.kvpager.harness.fuzz;

import io.kvpager.Geometry;
import io.kvpager.Layout;
import io.kvpager.harness.Bounded;
import io.vertx.core.Vertx;
import io.vertx.core.json.JsonObject;
import org.junit.jupiter.api.Test;

import java.time.Duration;

import static org.assertj.core.api.Assertions.assertThat;

/** The fuzz's checks can fail: a receiver that accepts everything, or answers 500, is caught on every message. */
class FuzzCheckTest {

    private static final PoolFacts FACTS = new PoolFacts("gullible", 2, 0, Geometry.of(2, 2, 512 << 10, 16, Layout.PAGE_MAJOR),
            new int[] {0, 1}, new int[] {0, 1, 2}, "gullible-node#1");

    private static FuzzReport against(Vertx vertx, io.vertx.core.Handler<io.vertx.core.eventbus.Message<Object>> receiver) {
        vertx.eventBus().consumer(FACTS.coordinatorAddress(), receiver);
        for (int r = 0; r < FACTS.tp(); r++) {
            vertx.eventBus().consumer(FACTS.workerAddress(r), receiver);
        }
        return Bounded.await(new Fuzz(vertx, FACTS, 3, 64, Duration.ofSeconds(10)).run(1_000), Duration.ofSeconds(60), "the fuzz");
    }

    @Test
    void aReceiverThatAcceptsEverythingFailsEveryMessage() {
        Vertx vertx = Vertx.vertx();
        try {
            FuzzReport report = against(vertx, m -> m.reply(new JsonObject()));
            assertThat(report.wrongCount()).isEqualTo(1_000);
            assertThat(report.byCode()).containsOnlyKeys("success");
            assertThat(report.wrong()).hasSize(20).first().asString().contains("expected", "got success");
        } finally {
            Bounded.await(vertx.close(), Duration.ofSeconds(10), "closing Vert.x");
        }
    }

    @Test
    void aReceiverThatFailsWith500OrTheWrongRefusalIsCaught() {
        Vertx vertx = Vertx.vertx();
        try {
            FuzzReport report = against(vertx, m -> m.fail(m.body() == null ? 500 : 409, "no"));
            assertThat(report.byCode()).containsKeys("500", "409");
            // every 500 is wrong, and a 409 is right only for the messages that deserve one
            assertThat(report.wrongCount()).isGreaterThan(report.byCode().get("500")).isLessThan(1_000);
        } finally {
            Bounded.await(vertx.close(), Duration.ofSeconds(10), "closing Vert.x");
        }
    }
}
