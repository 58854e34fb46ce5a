package io.kvpager.harness.gpu;

import java.util.List;
import java.util.function.DoubleSupplier;
import java.util.function.Supplier;

/**
 * Takes the floor, the event-bus floor and kvpager in turns (floor, bus, kvpager, floor, bus,
 * kvpager, ...), so that whatever the machine does between rounds reaches all three alike, and a
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
        if (rounds < 1) {
            throw new IllegalArgumentException("rounds must be at least 1, got " + rounds);
        }
        floor.get();
        bus.getAsDouble();
        kvpager.get();
        double[][] map = new double[3][rounds];
        double[][] unmap = new double[3][rounds];
        for (int r = 0; r < rounds; r++) {
            double[] f = floor.get();
            double b = bus.getAsDouble();
            double[] k = kvpager.get();
            map[0][r] = f[0];
            unmap[0][r] = f[1];
            map[1][r] = b;
            unmap[1][r] = b;
            map[2][r] = k[0];
            unmap[2][r] = k[1];
        }
        return List.of(new PathRow(shape, "map", map[0], map[1], map[2]),
                new PathRow(shape, "unmap", unmap[0], unmap[1], unmap[2]));
    }
}
