package io.kvpager.harness.gpu;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.within;

import io.kvpager.Layout;
import io.kvpager.cache.KvCache;
import io.kvpager.sim.SimOptions;
import io.vertx.core.Vertx;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Supplier;
import org.junit.jupiter.api.Test;

/** Alternating rounds, their spreads and ratios, and the alloc-free step they time, on the simulated device. */
class RoundsTest {

    @Test
    void spreadsAreMedianLowestAndHighest() {
        assertThat(Spread.of(new double[] {5, 1, 3, 2})).isEqualTo(new Spread(2.5, 1, 5));
        assertThat(Spread.of(new double[] {7})).isEqualTo(new Spread(7, 7, 7));
        assertThat(new Spread(2.5, 1, 5).micros()).isEqualTo("2.5 (1.0–5.0)");
        assertThat(new Spread(1.04, 0.97, 1.125).ratio()).isEqualTo("1.04x (0.97–1.13)");
        assertThatThrownBy(() -> Spread.of(new double[0])).isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void takesTheThreeInTurnsAfterOneUntimedRoundOfEach() {
        List<String> order = new ArrayList<>();
        int[] n = {0};
        List<PathRow> rows = AlternatingRounds.run("shape", 2, () -> {
            order.add("floor");
            n[0]++;
            return new double[] {100 * n[0], 200 * n[0]};
        }, () -> {
            order.add("bus");
            return 10;
        }, () -> {
            order.add("kvpager");
            return new double[] {120 * n[0], 260 * n[0]};
        });
        assertThat(order).containsExactly("floor", "bus", "kvpager", "floor", "bus", "kvpager", "floor", "bus", "kvpager");
        assertThat(rows).extracting(PathRow::op).containsExactly("map", "unmap");
        assertThat(rows.getFirst().floor()).containsExactly(200, 300);
        assertThat(rows.getFirst().kvpager()).containsExactly(240, 360);
        assertThat(rows.get(1).floor()).containsExactly(400, 600);
    }

    @Test
    void takesEveryWayThroughKvpagerAfterTheFloorsOfItsRound() {
        List<String> order = new ArrayList<>();
        Map<String, Supplier<double[]>> ways = new LinkedHashMap<>();
        ways.put(" a", () -> {
            order.add("a");
            return new double[] {1, 2};
        });
        ways.put(" b", () -> {
            order.add("b");
            return new double[] {3, 4};
        });
        List<PathRow> rows = AlternatingRounds.run("shape", 1, () -> {
            order.add("floor");
            return new double[] {5, 6};
        }, () -> {
            order.add("bus");
            return 7;
        }, ways);
        assertThat(order).containsExactly("floor", "bus", "a", "b", "floor", "bus", "a", "b");
        assertThat(rows).extracting(r -> r.shape() + "/" + r.op())
                .containsExactly("shape a/map", "shape a/unmap", "shape b/map", "shape b/unmap");
        assertThat(rows.get(3).kvpager()).containsExactly(4);
        assertThat(rows.get(3).floor()).containsExactly(6);
        assertThatThrownBy(() -> AlternatingRounds.run("shape", 1, () -> new double[] {1, 1}, () -> 1, Map.of()))
                .isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void ratiosAreTakenRoundByRound() {
        PathRow row = new PathRow("s", "map", new double[] {100, 200, 50}, new double[] {10, 10, 10},
                new double[] {110, 180, 60});
        assertThat(row.ratio().median()).isCloseTo(1.1, within(1e-9));
        assertThat(row.ratio().min()).isCloseTo(0.9, within(1e-9));
        assertThat(row.ratio().max()).isCloseTo(1.2, within(1e-9));
        assertThat(row.overFloors().median()).isCloseTo(1.0, within(1e-9));
        assertThat(row.noise()).isEqualTo("inside (noise)");
        assertThat(new PathRow("s", "map", new double[] {100, 101}, new double[] {1, 1}, new double[] {120, 130}).noise())
                .isEqualTo("above by 24.0 µs");
        assertThat(new PathRow("s", "map", new double[] {100, 101}, new double[] {1, 1}, new double[] {90, 90}).noise())
                .isEqualTo("below by 10.0 µs");
        assertThat(row.markdown()).isEqualTo("| s | map | 100.0 (50.0–200.0) | 10.0 (10.0–10.0) | 110.0 (60.0–180.0) | "
                + "1.10x (0.90–1.20) | 1.00x (0.86–1.00) | inside (noise) |");
        assertThatThrownBy(() -> new PathRow("s", "map", new double[] {1}, new double[] {1, 2}, new double[] {1}))
                .isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void everyFreeUnmapsItsPageInTheBenchmarkedPath() {
        Vertx vertx = Vertx.vertx();
        try {
            KvCache cache = Await.of(KvCache.deploy(vertx, MapPathBenchmark.options("rounds-sim", Layout.PAGE_MAJOR, 2)
                    .setDevice("sim").setSim(SimOptions.defaults().withGpuKey("rounds-sim"))));
            try {
                double[] medians = TwoPhaseLoop.medians(vertx, 50, () -> new MapPathBenchmark.AllocFree(cache, 3));
                assertThat(medians[0]).isPositive();
                assertThat(medians[1]).isPositive();
                MapPathBenchmark.requireEveryFreeUnmapped(cache, 150);
                assertThatThrownBy(() -> MapPathBenchmark.requireEveryFreeUnmapped(cache, 151))
                        .isInstanceOf(IllegalStateException.class).hasMessageContaining("counted 150 maps, 150 unmaps, 0 still mapped");
            } finally {
                Await.of(cache.close());
            }
        } finally {
            Await.of(vertx.close());
        }
    }
}
