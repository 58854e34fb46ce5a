package io.kvpager.harness.gpu;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.platform.engine.discovery.DiscoverySelectors.selectClass;

import io.vertx.core.Vertx;
import java.util.List;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.platform.engine.discovery.ClassSelector;

/** The GPU runner's CPU-side parts: choosing sections, finding and judging the GPU tests, the messaging floor. */
class GpuRunnerTest {

    private static final String FIXTURE = "gpu-runner-fixture";

    @Test
    void findsTheGpuTestClassesOnTheClasspath() {
        assertThat(GpuTests.testClasses()).extracting(ClassSelector::getClassName)
                .contains(CacheOnGpuTest.class.getName())
                .allMatch(name -> name.startsWith("io.kvpager.") && name.endsWith("Test"));
    }

    @Test
    void passesWhenEveryTaggedTestPasses() {
        GpuSection.Report report = new GpuTests(List.of(selectClass(Passing.class)), FIXTURE).run(null, false);
        assertThat(report.failed()).isFalse();
        assertThat(report.lines().getFirst()).isEqualTo("GPU tests: 1 passed, 0 failed, 0 skipped or aborted");
    }

    @Test
    void failsOnAFailureOutsideAnyTest() {
        GpuSection.Report report = new GpuTests(List.of(selectClass(Passing.class), selectClass(BrokenSetUp.class)), FIXTURE)
                .run(null, false);
        assertThat(report.failed()).isTrue();
        assertThat(report.lines().getFirst()).isEqualTo("GPU tests: 1 passed, 0 failed, 0 skipped or aborted");
        assertThat(String.join("\n", report.lines())).contains("1 failures outside any test").contains("no device today");
    }

    @Test
    void runsOnlyJupiterTests() {
        // a jqwik property with the same tag would fail if its engine ran
        GpuSection.Report report = new GpuTests(List.of(selectClass(Passing.class), selectClass(FailingProperty.class)), FIXTURE)
                .run(null, false);
        assertThat(report.failed()).isFalse();
        assertThat(report.lines()).hasSize(1);
    }

    @Test
    void failsWhenNoGpuTestIsFound() {
        GpuSection.Report report = new GpuTests(List.of(selectClass(Passing.class)), "no-such-tag").run(null, false);
        assertThat(report.failed()).isTrue();
        assertThat(report.lines()).contains("  no GPU test was found: the classpath lacks the test classes");
    }

    @Test
    void choosesSectionsByNameInTheirOwnOrder() {
        assertThat(GpuRunner.choose(new String[] {"--quick"})).extracting(GpuSection::name)
                .containsExactly("tests", "map", "demo", "attention", "startup");
        assertThat(GpuRunner.choose(new String[] {"--sections", "demo,tests"})).extracting(GpuSection::name)
                .containsExactly("tests", "demo");
    }

    @Test
    void refusesUnknownSectionsAndArguments() {
        assertThatThrownBy(() -> GpuRunner.choose(new String[] {"--sections", "map,flash"}))
                .isInstanceOf(IllegalArgumentException.class).hasMessage("no section 'flash'; sections: tests, map, demo, attention, startup");
        assertThatThrownBy(() -> GpuRunner.choose(new String[] {"--sections"})).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> GpuRunner.choose(new String[] {"--fast"})).isInstanceOf(IllegalArgumentException.class)
                .hasMessageStartingWith("unknown argument '--fast'");
    }

    @Test
    void warmsTheCachePathUpOnTheSimulatedDevice() {
        Vertx vertx = Vertx.vertx();
        try {
            MapPathBenchmark.warmUp(vertx, new int[] {1, 2}, 20);
        } finally {
            Await.of(vertx.close());
        }
    }

    @Test
    void measuresAJoinedFanOutToEchoRanks() {
        Vertx vertx = Vertx.vertx();
        try (BusFloor floor = BusFloor.open(vertx, 2)) {
            assertThat(floor.medianMicros(20)).isPositive();
            assertThat(floor.medianMicros(20)).isPositive();
        } finally {
            Await.of(vertx.close());
        }
    }

    /** A GPU test that passes. */
    @Tag(FIXTURE)
    static class Passing {
        @Test
        void passes() {
            assertThat(1 + 1).isEqualTo(2);
        }
    }

    /** A class whose set-up fails: no test of it fails, the class does. */
    @Tag(FIXTURE)
    static class BrokenSetUp {
        @BeforeAll
        static void openTheDevice() {
            throw new IllegalStateException("no device today");
        }

        @Test
        void neverRuns() {
            assertThat(true).isTrue();
        }
    }

    /** A property of another engine (jqwik), tagged like a GPU test. */
    @net.jqwik.api.Tag(FIXTURE)
    static class FailingProperty {
        @net.jqwik.api.Example
        boolean fails() {
            return false;
        }
    }
}
