package io.kvpager.harness.gpu;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.function.DoubleSupplier;
import java.util.function.Supplier;

/**
 * Takes the floor, the event-bus floor and kvpager in turns (floor, bus, kvpager, floor, bus,
 * kvpager, ...; with several ways through kvpager, each of them after the floors), so that whatever the machine does between rounds reaches all three alike, and a
 * ratio is taken between figures measured a few milliseconds apart.
 */
final class AlternatingRounds {

    private AlternatingRounds() {
    }

    /**
     * Runs {@code rounds} rounds after one untimed round of each, and answers the map row and the
     * unmap row of {@code shape}.
     *
     * @param floor one round of the driver floor: median µs of map and of unmap
     * @param bus one round of the bus floor: median µs
     * @param kvpager one round through kvpager: median µs of map and of unmap
     */
    static List<PathRow> run(String shape, int rounds, Supplier<double[]> floor, DoubleSupplier bus,
                             Supplier<double[]> kvpager) {
        return run(shape, rounds, floor, bus, Map.of("", kvpager));
    }

    /**
     * The same with several ways through kvpager (or peers of the floor), each taken in every
     * round after the floors; each answers its map and unmap row, its shape {@code shape} followed
     * by the variant's key.
     */
    static List<PathRow> run(String shape, int rounds, Supplier<double[]> floor, DoubleSupplier bus,
                             Map<String, Supplier<double[]>> variants) {
        if (rounds < 1) {
            throw new IllegalArgumentException("rounds must be at least 1, got " + rounds);
        }
        if (variants.isEmpty()) {
            throw new IllegalArgumentException("at least one way through kvpager is needed");
        }
        List<Map.Entry<String, Supplier<double[]>>> ways = List.copyOf(variants.entrySet());
        floor.get();
        bus.getAsDouble();
        ways.forEach(w -> w.getValue().get());
        double[][] map = new double[2 + ways.size()][rounds];
        double[][] unmap = new double[2 + ways.size()][rounds];
        for (int r = 0; r < rounds; r++) {
            double[] f = floor.get();
            double b = bus.getAsDouble();
            map[0][r] = f[0];
            unmap[0][r] = f[1];
            map[1][r] = b;
            unmap[1][r] = b;
            for (int w = 0; w < ways.size(); w++) {
                double[] k = ways.get(w).getValue().get();
                map[2 + w][r] = k[0];
                unmap[2 + w][r] = k[1];
            }
        }
        List<PathRow> rows = new ArrayList<>();
        for (int w = 0; w < ways.size(); w++) {
            String name = shape + ways.get(w).getKey();
            rows.add(new PathRow(name, "map", map[0], map[1], map[2 + w]));
            rows.add(new PathRow(name, "unmap", unmap[0], unmap[1], unmap[2 + w]));
        }
        return rows;
    }
}
