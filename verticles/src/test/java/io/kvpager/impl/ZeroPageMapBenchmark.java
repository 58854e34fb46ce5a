package io.kvpager.impl;

import io.kvpager.Geometry;
import io.kvpager.Layout;
import io.kvpager.device.GroupTensors;
import io.kvpager.device.HandlePoolOptions;
import io.kvpager.device.RankHandlePool;
import io.kvpager.sim.SimDevice;
import io.kvpager.spi.Device;
import io.kvpager.spi.DeviceFactory;
import org.openjdk.jmh.annotations.AuxCounters;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Warmup;

import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * What the zero page costs on the hot path: mapping and unmapping one page id, with and without
 * it (with it, each slot also swaps the zero page out and back in: one more unmap, map and
 * set-access per handle). Same group as {@link ZeroPageBenchmark}; run it the same way.
 * {@code poolBoundPages} 1 keeps the unmapped handles in the rank's pool for the next map, 0
 * creates and releases them every cycle.
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.MICROSECONDS)
@Warmup(iterations = 2, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(1)
public class ZeroPageMapBenchmark {

    @Param({"sim"})
    public String kind;

    @Param({"false", "true"})
    public boolean latency;

    @Param({"PAGE_MAJOR", "PER_LAYER"})
    public Layout layout;

    @Param({"false", "true"})
    public boolean zeroPage;

    @Param({"0", "1"})
    public int poolBoundPages;

    private Device device;
    private RankHandlePool handles;
    private GroupTensors tensors;
    private final int[] page = {7};

    /** Simulated driver time, summed with the map-unmap cycles over the measurement iterations. */
    @State(Scope.Thread)
    @AuxCounters(AuxCounters.Type.EVENTS)
    public static class DriverTime {
        public double driverMs;
        public long cycles;

        @Setup(Level.Iteration)
        public void reset() {
            driverMs = 0;
            cycles = 0;
        }
    }

    @Setup(Level.Trial)
    public void open() {
        Map<String, Object> options = kind.equals("sim")
                ? Map.of("latency", latency, "gpuKey", "zero-page-map-benchmark")
                : Map.of();
        device = DeviceFactory.forKind(kind).open(0, "pp0/tp0", options);
        device.attach();
        handles = new RankHandlePool(device);
        tensors = GroupTensors.create(device, handles, 0, new Geometry(32, 2, 16 << 10, Geometry.DEFAULT_PAGE_BYTES, 16, layout),
                zeroPage, new HandlePoolOptions(0, poolBoundPages));
    }

    @Benchmark
    public void mapAndUnmapOnePage(DriverTime driverTime) {
        long before = device instanceof SimDevice sim ? sim.driverNanos() : 0;
        tensors.map(page);
        tensors.unmap(page);
        if (device instanceof SimDevice sim) {
            driverTime.driverMs += (sim.driverNanos() - before) / 1e6;
            driverTime.cycles++;
        }
    }

    @TearDown(Level.Trial)
    public void close() {
        tensors.destroy();
        handles.close();
        device.close();
    }
}
