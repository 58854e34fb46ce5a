package io.kvpager.harness.gpu;

import static org.assertj.core.api.Assertions.assertThat;

import io.vertx.core.Vertx;
import org.junit.jupiter.api.Test;
import org.junit.platform.engine.discovery.ClassSelector;

/** The GPU runner's CPU-side parts: finding the test classes, and the messaging floor. */
class GpuRunnerTest {

    @Test
    void findsTheGpuTestClassesOnTheClasspath() {
        assertThat(GpuRunner.testClasses()).extracting(ClassSelector::getClassName)
                .contains(CacheOnGpuTest.class.getName())
                .allMatch(name -> name.startsWith("io.kvpager.") && name.endsWith("Test"));
    }

    @Test
    void warmsTheCachePathUpOnTheSimulatedDevice() {
        Vertx vertx = Vertx.vertx();
        try {
            new MapPathBenchmark(vertx).warmUp(new int[] {1, 2}, 20);
        } finally {
            Await.of(vertx.close());
        }
    }

    @Test
    void measuresAJoinedFanOutToEchoRanks() {
        Vertx vertx = Vertx.vertx();
        try {
            assertThat(BusFloor.medianMicros(vertx, 2, 20)).isPositive();
        } finally {
            Await.of(vertx.close());
        }
    }
}
