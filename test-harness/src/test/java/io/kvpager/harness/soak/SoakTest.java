package io.kvpager.harness.soak;

import io.kvpager.harness.Bounded;
import io.vertx.core.Vertx;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.time.Duration;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The soak's short form: 100,000 allocations and frees on TP=4 with 1 % random driver faults
 * (see {@link Soak} for what is checked). {@code -Dkvpager.soak.ops=1000000} runs the long form
 * here, {@code -Dkvpager.soak.seed=N} another seed; {@link SoakMain} runs it outside the build.
 */
class SoakTest {

    private Vertx vertx;

    @BeforeEach
    void start() {
        vertx = Vertx.vertx();
    }

    @AfterEach
    void stop() {
        Bounded.await(vertx.close(), Duration.ofSeconds(30), "closing Vert.x");
    }

    @Test
    void aMillionOperationsOnDemandAHundredThousandInTheBuild() {
        long ops = Long.getLong("kvpager.soak.ops", 100_000);
        long seed = Long.getLong("kvpager.soak.seed", 42);
        System.out.println("soak: " + ops + " operations, seed " + seed);
        SoakReport report = Soak.run(vertx, "soak", SoakOptions.of(ops, seed));
        System.out.println(report.describe());
        assertThat(report.ops()).isEqualTo(ops);
        assertThat(report.checks()).isGreaterThanOrEqualTo(ops / 10_000);
        assertThat(report.faultsFired()).as("faults that fired").isPositive();
        assertThat(report.allocs()).isPositive();
        assertThat(report.maps()).as("pages mapped: the soak must reach the ranks").isPositive();
    }
}
