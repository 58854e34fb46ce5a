package io.kvpager.sim;

import static org.assertj.core.api.Assertions.assertThat;

import io.kvpager.spi.DeviceException;
import java.util.concurrent.TimeUnit;
import java.util.stream.LongStream;
import org.junit.jupiter.api.Test;

class LatencyModelTest {

    static final long US = 1000;

    @Test
    void theDefaultModelChargesNothing() {
        LatencyModel none = LatencyModel.none();
        assertThat(none.enabled()).isFalse();
        for (DriverCall call : DriverCall.values()) {
            assertThat(none.drawNanos(call)).isZero();
        }
    }

    @Test
    void theH200ModelUsesTheMeasuredRanges() {
        LatencyModel h200 = LatencyModel.h200Midpoints();
        assertThat(h200.cost(DriverCall.CREATE)).isEqualTo(new LatencyModel.Cost(9 * US, 17 * US));
        assertThat(h200.cost(DriverCall.MAP)).isEqualTo(new LatencyModel.Cost(1 * US, 4 * US));
        assertThat(h200.cost(DriverCall.ACCESS)).isEqualTo(new LatencyModel.Cost(26 * US, 34 * US));
        assertThat(h200.cost(DriverCall.UNMAP)).isEqualTo(new LatencyModel.Cost(17 * US, 23 * US));
        assertThat(h200.cost(DriverCall.RELEASE)).isEqualTo(new LatencyModel.Cost(10 * US, 16 * US));
        assertThat(h200.cost(DriverCall.SYNCHRONIZE)).isEqualTo(new LatencyModel.Cost(2 * US, 16 * US));
        assertThat(h200.drawNanos(DriverCall.ACCESS)).isEqualTo(30 * US);
        assertThat(h200.drawNanos(DriverCall.MAP)).isEqualTo(2500);
        assertThat(h200.drawNanos(DriverCall.RESERVE)).isZero();
    }

    @Test
    void seededDrawsStayInRangeAndRepeat() {
        for (DriverCall call : DriverCall.values()) {
            LatencyModel.Cost cost = LatencyModel.h200(1).cost(call);
            LatencyModel a = LatencyModel.h200(42);
            LatencyModel b = LatencyModel.h200(42);
            long[] drawsA = LongStream.range(0, 500).map(i -> a.drawNanos(call)).toArray();
            long[] drawsB = LongStream.range(0, 500).map(i -> b.drawNanos(call)).toArray();
            assertThat(drawsA).isEqualTo(drawsB);
            assertThat(LongStream.of(drawsA).boxed().toList()).allSatisfy(n -> assertThat(n).isBetween(cost.minNanos(), cost.maxNanos()));
            if (cost.maxNanos() > cost.minNanos()) {
                assertThat(LongStream.of(drawsA).distinct().count()).as("%s draws vary", call).isGreaterThan(1);
            }
        }
    }

    @Test
    void awaitLastsAtLeastItsMicroseconds() {
        for (long nanos : new long[] {1 * US, 30 * US, 500 * US, TimeUnit.MILLISECONDS.toNanos(2)}) {
            long start = System.nanoTime();
            LatencyModel.await(nanos);
            assertThat(System.nanoTime() - start).isGreaterThanOrEqualTo(nanos);
        }
    }

    @Test
    void aDeviceChargesEachCallItsCost() {
        SimGpu gpu = new SimGpu(64L << 20, 2L << 20);
        SimDevice device = gpu.open("pp0/tp0", LatencyModel.h200Midpoints(), new FaultPlan());
        try {
            long range = device.reserve(2L << 20, 0);
            long handle = device.create(2L << 20);
            device.map(range, 2L << 20, handle);
            device.setAccess(range, 2L << 20);
            device.synchronize();
            device.unmap(range, 2L << 20);
            device.release(handle);
            // create 13 + map 2.5 + access 30 + synchronize 9 + unmap 20 + release 13 µs; reserve is not charged
            assertThat(device.driverNanos()).isEqualTo(87_500L);
        } finally {
            device.close();
        }
    }

    @Test
    void aFailedCallCostsNothing() {
        SimGpu gpu = new SimGpu(64L << 20, 2L << 20);
        SimDevice device = gpu.open("pp0/tp0", LatencyModel.h200Midpoints(), new FaultPlan());
        try {
            device.create(128L << 20);
        } catch (DeviceException expected) {
            assertThat(expected.isOutOfMemory()).isTrue();
        } finally {
            device.close();
        }
        assertThat(device.driverNanos()).isZero();
    }
}
