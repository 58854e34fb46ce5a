package io.kvpager.sim;

import java.util.EnumMap;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;

/**
 * What each driver call costs in time. The H200 model uses the ranges measured on an H200
 * (driver 580, CUDA 13, 2 MiB handles; docs/performance.md, "The CUDA device against the raw driver"): a call costs the same whatever the handle's
 * size, since the driver's cost is per handle, not per byte. Off ({@link #none()}) by default,
 * so tests run at host speed.
 */
public final class LatencyModel {

    /** One call's cost range in nanoseconds, both ends inclusive. */
    public record Cost(long minNanos, long maxNanos) {
        public Cost {
            if (minNanos < 0 || maxNanos < minNanos) {
                throw new IllegalArgumentException("cost range [" + minNanos + ", " + maxNanos + "] ns is not a range");
            }
        }

        static Cost micros(long min, long max) {
            return new Cost(TimeUnit.MICROSECONDS.toNanos(min), TimeUnit.MICROSECONDS.toNanos(max));
        }

        public long midpointNanos() {
            return minNanos + (maxNanos - minNanos) / 2;
        }
    }

    /** Above this a wait parks first; below it, parking's wake-up slack would dwarf the cost. */
    private static final long SPIN_NANOS = TimeUnit.MICROSECONDS.toNanos(200);

    private static final Map<DriverCall, Cost> H200 = h200Table();

    private static final LatencyModel NONE = new LatencyModel(new EnumMap<>(DriverCall.class), null, false);

    private final Map<DriverCall, Cost> costs;
    private final SplittableRandom random;
    private final boolean enabled;

    private LatencyModel(Map<DriverCall, Cost> costs, SplittableRandom random, boolean enabled) {
        this.costs = costs;
        this.random = random;
        this.enabled = enabled;
    }

    /** Every call is free. */
    public static LatencyModel none() {
        return NONE;
    }

    /** The H200's measured costs, each call drawn uniformly within its range from {@code seed}. */
    public static LatencyModel h200(long seed) {
        return new LatencyModel(H200, new SplittableRandom(seed), true);
    }

    /** The H200's measured costs, each call at the midpoint of its range. */
    public static LatencyModel h200Midpoints() {
        return new LatencyModel(H200, null, true);
    }

    public boolean enabled() {
        return enabled;
    }

    /** The range {@code call} costs; {@code [0, 0]} for calls the model does not charge. */
    public Cost cost(DriverCall call) {
        return costs.getOrDefault(call, new Cost(0, 0));
    }

    /** The time one {@code call} takes now. */
    public long drawNanos(DriverCall call) {
        Cost cost = cost(call);
        if (cost.maxNanos() == 0) {
            return 0;
        }
        if (random == null || cost.minNanos() == cost.maxNanos()) {
            return cost.midpointNanos();
        }
        synchronized (this) {
            return random.nextLong(cost.minNanos(), cost.maxNanos() + 1);
        }
    }

    /**
     * Blocks the calling thread for {@code nanos}, honouring microseconds: a short wait spins
     * until its deadline, a long one parks until close to it and spins the rest.
     */
    public static void await(long nanos) {
        if (nanos <= 0) {
            return;
        }
        long deadline = System.nanoTime() + nanos;
        long left;
        while ((left = deadline - System.nanoTime()) > SPIN_NANOS) {
            LockSupport.parkNanos(left - SPIN_NANOS / 2);
        }
        while (deadline - System.nanoTime() > 0) {
            Thread.onSpinWait();
        }
    }

    private static Map<DriverCall, Cost> h200Table() {
        Map<DriverCall, Cost> table = new EnumMap<>(DriverCall.class);
        table.put(DriverCall.CREATE, Cost.micros(9, 17));
        table.put(DriverCall.MAP, Cost.micros(1, 4));
        table.put(DriverCall.ACCESS, Cost.micros(26, 34));
        table.put(DriverCall.UNMAP, Cost.micros(17, 23));
        table.put(DriverCall.RELEASE, Cost.micros(10, 16));
        table.put(DriverCall.SYNCHRONIZE, Cost.micros(2, 16));
        // Reserve and free were not measured; they happen once per tensor, off every hot path.
        return table;
    }

    @Override
    public String toString() {
        return enabled ? "h200" + (random == null ? " midpoints" : "") : "none";
    }
}
