package io.kvpager.harness.gpu;

import java.util.Locale;

/**
 * One operation (map or unmap) of one shape, measured in alternating rounds: the raw driver loop
 * (the floor), the event-bus floor and kvpager, one figure of each per round. Ratios are taken
 * round by round, between figures measured next to each other, then spread like the figures.
 *
 * @param shape what was measured, e.g. {@code PAGE_MAJOR TP=1 batch 1}
 * @param op {@code map} or {@code unmap}
 * @param floor per round, µs of the driver work alone on one thread
 * @param bus per round, µs of a joined request to echo ranks (the messaging floor)
 * @param kvpager per round, µs of the same work through kvpager
 */
record PathRow(String shape, String op, double[] floor, double[] bus, double[] kvpager) {

    PathRow {
        if (floor.length == 0 || floor.length != bus.length || floor.length != kvpager.length) {
            throw new IllegalArgumentException("a row needs the same number of rounds (at least one) of each: "
                    + floor.length + ", " + bus.length + ", " + kvpager.length);
        }
    }

    static final String HEADER = "| shape | op | driver floor µs | bus floor µs | kvpager µs | kvpager / floor | kvpager / (floor + bus) | kvpager against the floor's spread |\n"
            + "| --- | --- | --- | --- | --- | --- | --- | --- |";

    /** kvpager over the floor, round by round. */
    Spread ratio() {
        double[] r = new double[floor.length];
        for (int i = 0; i < r.length; i++) {
            r[i] = kvpager[i] / floor[i];
        }
        return Spread.of(r);
    }

    /** kvpager over the sum of both floors, round by round. */
    Spread overFloors() {
        double[] r = new double[floor.length];
        for (int i = 0; i < r.length; i++) {
            r[i] = kvpager[i] / (floor[i] + bus[i]);
        }
        return Spread.of(r);
    }

    /**
     * Where kvpager's median lies against the floor's rounds: inside their spread means the
     * difference is within the floor's own noise.
     */
    String noise() {
        Spread f = Spread.of(floor);
        double kv = Spread.of(kvpager).median();
        if (f.contains(kv)) {
            return "inside (noise)";
        }
        return String.format(Locale.ROOT, "%s by %.1f µs", kv > f.max() ? "above" : "below",
                kv > f.max() ? kv - f.max() : f.min() - kv);
    }

    String markdown() {
        return "| " + shape + " | " + op + " | " + Spread.of(floor).micros() + " | " + Spread.of(bus).micros() + " | "
                + Spread.of(kvpager).micros() + " | " + ratio().ratio() + " | " + overFloors().ratio() + " | " + noise() + " |";
    }
}
