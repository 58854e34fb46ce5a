package io.kvpager.harness.fault;

import io.kvpager.Layout;
import io.kvpager.harness.Bounded;
import io.kvpager.harness.BusTap;
import io.vertx.core.Vertx;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DynamicContainer;
import org.junit.jupiter.api.DynamicNode;
import org.junit.jupiter.api.DynamicTest;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestFactory;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.regex.Pattern;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Every combination of driver call, rank (first, middle and last of TP=4), page of the batch
 * (first, middle, last), kind of fault and layout, each on a pool of its own (see
 * {@link FaultScenario}), one after the other on one Vert.x instance. Combinations that mean
 * nothing are reported as skipped with the reason; the summary line counts them.
 */
class FaultMatrixTest {

    /** {@code -Dkvpager.faults.only=<regex>} runs only the cases whose name it finds, while working on one. */
    private static final Pattern ONLY = Pattern.compile(System.getProperty("kvpager.faults.only", ""));
    private static final AtomicInteger RUN = new AtomicInteger();
    private static final AtomicInteger PASSED = new AtomicInteger();
    private static final Map<String, Integer> SKIPPED = new TreeMap<>();
    private static final AtomicInteger INSTANCES = new AtomicInteger();
    private static Vertx vertx;
    private static BusTap tap;
    private static long started;

    @BeforeAll
    static void start() {
        vertx = Vertx.vertx();
        tap = BusTap.install(vertx);
        started = System.nanoTime();
    }

    @AfterAll
    static void summary() {
        long seconds = (System.nanoTime() - started) / 1_000_000_000L;
        int skipped = SKIPPED.values().stream().mapToInt(Integer::intValue).sum();
        System.out.printf("fault matrix: %d combinations, %d run, %d passed, %d skipped as meaningless, in %d s%n",
                FaultCase.all().size(), RUN.get(), PASSED.get(), skipped, seconds);
        SKIPPED.forEach((reason, n) -> System.out.printf("  skipped %3d: %s%n", n, reason));
        tap.remove();
        Bounded.await(vertx.close(), Duration.ofSeconds(30), "closing Vert.x");
    }

    @TestFactory
    List<DynamicNode> faultMatrix() {
        FaultScenario scenario = new FaultScenario(vertx, tap);
        List<DynamicNode> layouts = new ArrayList<>();
        for (Layout layout : Layout.values()) {
            List<DynamicNode> kinds = new ArrayList<>();
            for (FaultKind kind : FaultKind.values()) {
                List<DynamicNode> cases = new ArrayList<>();
                for (FaultCase c : FaultCase.all()) {
                    if (c.layout() == layout && c.kind() == kind && ONLY.matcher(c.name()).find()) {
                        cases.add(DynamicTest.dynamicTest(c.name(), () -> run(scenario, c)));
                    }
                }
                kinds.add(DynamicContainer.dynamicContainer(kind.name(), cases));
            }
            layouts.add(DynamicContainer.dynamicContainer(layout.name(), kinds));
        }
        return layouts;
    }

    private static void run(FaultScenario scenario, FaultCase c) {
        String reason = c.skipReason();
        if (reason != null) {
            synchronized (SKIPPED) {
                SKIPPED.merge(reason, 1, Integer::sum);
            }
            Assumptions.abort(reason);
        }
        RUN.incrementAndGet();
        scenario.run(c, "fm" + INSTANCES.incrementAndGet());
        PASSED.incrementAndGet();
    }

    @Test
    void theMatrixCoversEveryCombination() {
        assertThat(FaultCase.all()).hasSize(6 * 3 * 3 * 6 * 2).doesNotHaveDuplicates();
    }
}
