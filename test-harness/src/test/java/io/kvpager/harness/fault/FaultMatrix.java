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
import org.junit.jupiter.api.TestFactory;
import org.junit.jupiter.api.TestInstance;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.regex.Pattern;

/**
 * Every combination of driver call, rank (first, middle and last of TP=4), page of the batch
 * (first, middle, last) and kind of fault, on one layout, each on a pool of its own (see
 * {@link FaultScenario}), one after the other on a Vert.x instance of the layout's own.
 * Combinations that mean nothing are not generated (so the test report counts no skip for them);
 * {@link FaultMatrixCoverageTest} checks that the two layouts' matrices together hold every
 * meaningful one and says how many were left out, and why.
 *
 * <p>Most of a case's time is waiting: a timeout kind waits out its 500 ms send timeout. The two
 * layouts' matrices run one after the other, each with its own Vert.x, bus tap and instance names:
 * run beside each other, in a build of four modules at a time on two cores, a case's "next
 * allocation" once met a healthy rank's 500 ms send timeout.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
abstract class FaultMatrix {

    /** {@code -Dkvpager.faults.only=<regex>} runs only the cases whose name it finds, while working on one. */
    private static final Pattern ONLY = Pattern.compile(System.getProperty("kvpager.faults.only", ""));
    /** Instance names unique over both layouts' matrices. */
    private static final AtomicInteger INSTANCES = new AtomicInteger();
    private final Layout layout;
    private final AtomicInteger run = new AtomicInteger();
    private final AtomicInteger passed = new AtomicInteger();
    private Vertx vertx;
    private BusTap tap;
    private long started;

    FaultMatrix(Layout layout) {
        this.layout = layout;
    }

    @BeforeAll
    void start() {
        vertx = Vertx.vertx();
        tap = BusTap.install(vertx);
        started = System.nanoTime();
    }

    @AfterAll
    void summary() {
        long seconds = (System.nanoTime() - started) / 1_000_000_000L;
        long meaningful = FaultCase.meaningful().stream().filter(c -> c.layout() == layout).count();
        System.out.printf("fault matrix, %s: %d meaningful combinations, %d run, %d passed, in %d s%n",
                layout, meaningful, run.get(), passed.get(), seconds);
        tap.remove();
        Bounded.await(vertx.close(), Duration.ofSeconds(30), "closing Vert.x");
    }

    @TestFactory
    List<DynamicNode> faultMatrix() {
        FaultScenario scenario = new FaultScenario(vertx, tap);
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
        return kinds;
    }

    private void run(FaultScenario scenario, FaultCase c) {
        run.incrementAndGet();
        scenario.run(c, "fm" + INSTANCES.incrementAndGet());
        passed.incrementAndGet();
    }
}
