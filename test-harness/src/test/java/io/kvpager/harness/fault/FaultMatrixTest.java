package io.kvpager.harness.fault;

import io.kvpager.Layout;
import io.kvpager.harness.Bounded;
import io.kvpager.harness.BusTap;
import io.vertx.core.Vertx;
import org.junit.jupiter.api.AfterAll;
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
 * nothing are not generated (so the test report counts no skip for them); the summary line says
 * how many were left out, and why.
 */
class FaultMatrixTest {

    /** {@code -Dkvpager.faults.only=<regex>} runs only the cases whose name it finds, while working on one. */
    private static final Pattern ONLY = Pattern.compile(System.getProperty("kvpager.faults.only", ""));
    private static final AtomicInteger RUN = new AtomicInteger();
    private static final AtomicInteger PASSED = new AtomicInteger();
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
        Map<String, Integer> leftOut = new TreeMap<>();
        for (FaultCase c : FaultCase.product()) {
            if (c.meaninglessBecause() != null) {
                leftOut.merge(c.meaninglessBecause(), 1, Integer::sum);
            }
        }
        System.out.printf("fault matrix: %d meaningful combinations of %d, %d run, %d passed, in %d s%n",
                FaultCase.meaningful().size(), FaultCase.product().size(), RUN.get(), PASSED.get(), seconds);
        leftOut.forEach((reason, n) -> System.out.printf("  left out %3d: %s%n", n, reason));
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
                for (FaultCase c : FaultCase.meaningful()) {
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
        RUN.incrementAndGet();
        scenario.run(c, "fm" + INSTANCES.incrementAndGet());
        PASSED.incrementAndGet();
    }

    @Test
    void theMatrixCoversEveryMeaningfulCombination() {
        assertThat(FaultCase.product()).hasSize(6 * 3 * 3 * 6 * 2).doesNotHaveDuplicates();
        assertThat(FaultCase.meaningful()).isNotEmpty()
                .allSatisfy(c -> assertThat(c.meaninglessBecause()).isNull())
                .hasSize((int) FaultCase.product().stream().filter(c -> c.meaninglessBecause() == null).count());
        // every kind, call and layout still appears in the matrix that runs
        for (FaultKind kind : FaultKind.values()) {
            assertThat(FaultCase.meaningful()).anySatisfy(c -> assertThat(c.kind()).isEqualTo(kind));
        }
        for (FaultOp op : FaultOp.values()) {
            assertThat(FaultCase.meaningful()).anySatisfy(c -> assertThat(c.op()).isEqualTo(op));
        }
    }
}
