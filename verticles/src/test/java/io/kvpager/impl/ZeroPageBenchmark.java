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
 * What the zero page costs at start-up: {@code create-tensors} of one group with and without it,
 * on one rank. Without it, creating tensors only reserves virtual ranges; with it, one handle is
 * created, cleared and mapped into every slot of every page id ({@code pages} mappings for
 * PAGE_MAJOR, {@code pages × layers × kvBuffers} for PER_LAYER), and destroying unmaps them all.
 *
 * <p>The group is a 32-layer model's K and V in 2 MiB pages, 256 page ids (32 GiB of virtual
 * space per rank). {@code latency=true} makes the sim take the H200's measured time per driver
 * call; {@code kind=cuda} runs the same on a GPU. Besides the wall time, the sim reports the
 * simulated driver time ({@link DriverTime}).
 *
 * <pre>
 * mvn -o -q -pl verticles -am test-compile
 * java -cp verticles/target/test-classes:verticles/target/classes:$(dependency classpath) \
 *     org.openjdk.jmh.Main ZeroPageBenchmark
 * </pre>
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.MILLISECONDS)
@Warmup(iterations = 2, time = 1)
@Measurement(iterations = 5, time = 2)
@Fork(1)
public class ZeroPageBenchmark {

    @Param({"sim"})
    public String kind;

    @Param({"false", "true"})
    public boolean latency;

    @Param({"PAGE_MAJOR", "PER_LAYER"})
    public Layout layout;

    @Param({"false", "true"})
    public boolean zeroPage;

    @Param({"256"})
    public int pages;

    private Device device;
    private RankHandlePool handles;
    private Geometry geometry;
    private GroupTensors tensors;

    /**
     * The sim's own account of the driver time the creates took (H200 latencies, or none), which
     * host load does not blur. JMH sums both counters over the measurement iterations:
     * {@code driverMs / creates} is the driver time of one create.
     */
    @State(Scope.Thread)
    @AuxCounters(AuxCounters.Type.EVENTS)
    public static class DriverTime {
        public double driverMs;
        public long creates;

        @Setup(Level.Iteration)
        public void reset() {
            driverMs = 0;
            creates = 0;
        }
    }

    @Setup(Level.Trial)
    public void open() {
        Map<String, Object> options = kind.equals("sim")
                ? Map.of("latency", latency, "gpuKey", "zero-page-benchmark")
                : Map.of();
        device = DeviceFactory.forKind(kind).open(0, "pp0/tp0", options);
        device.attach();
        handles = new RankHandlePool(device);
        geometry = new Geometry(32, 2, 16 << 10, Geometry.DEFAULT_PAGE_BYTES, pages, layout);
    }

    @Benchmark
    public GroupTensors createTensors(DriverTime driverTime) {
        long before = device instanceof SimDevice sim ? sim.driverNanos() : 0;
        // no pooled handles: this measures the tensors' own start-up
        tensors = GroupTensors.create(device, handles, 0, geometry, zeroPage, new HandlePoolOptions(0, 0));
        if (device instanceof SimDevice sim) {
            driverTime.driverMs += (sim.driverNanos() - before) / 1e6;
            driverTime.creates++;
        }
        return tensors;
    }

    @TearDown(Level.Invocation)
    public void destroyTensors() {
        if (tensors != null) {
            tensors.destroy();
            tensors = null;
        }
    }

    @TearDown(Level.Trial)
    public void close() {
        handles.close();
        device.close();
    }
}
