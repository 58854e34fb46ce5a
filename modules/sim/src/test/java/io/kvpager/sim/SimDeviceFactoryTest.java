package io.kvpager.sim;

import static io.kvpager.sim.SimDeviceRulesTest.driverError;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.kvpager.spi.Device;
import io.kvpager.spi.DeviceException;
import io.kvpager.spi.DeviceFactory;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInfo;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

class SimDeviceFactoryTest {

    static final long G = 2L << 20;

    final DeviceFactory factory = DeviceFactory.forKind("sim");
    String key;

    @BeforeEach
    void key(TestInfo test) {
        key = "factory-test-" + test.getDisplayName();
    }

    @AfterEach
    void forget() {
        SimGpus.gpus(key).forEach(gpu -> gpu.devices().forEach(SimDevice::close));
        SimGpus.reset(key);
    }

    Map<String, Object> options(Object... keyValues) {
        Map<String, Object> map = new HashMap<>();
        map.put("gpuKey", key);
        for (int i = 0; i < keyValues.length; i += 2) {
            map.put((String) keyValues[i], keyValues[i + 1]);
        }
        return map;
    }

    @Test
    void theSimKindIsFoundThroughTheServiceLoaderAndAlwaysAvailable() {
        assertThat(factory).isInstanceOf(SimDeviceFactory.class);
        assertThat(factory.kind()).isEqualTo("sim");
        assertThat(factory.unavailableReason()).isEmpty();
    }

    @Test
    void defaultsAreAnH200WithTwoMiBGranularity() {
        Device device = factory.open(0, "pp0/tp0", options());
        assertThat(device.granularity()).isEqualTo(2L << 20);
        assertThat(device.memoryInfo().totalBytes()).isEqualTo(141L << 30);
        assertThat(device.memoryInfo().freeBytes()).isEqualTo(141L << 30);
        assertThat(device.describe()).isEqualTo("sim:" + key + "/0 pp0/tp0");
        assertThat(((SimDevice) device).latency().enabled()).isFalse();
        assertThat(SimOptions.parse(null)).isEqualTo(SimOptions.defaults());
        assertThat(SimOptions.parse(Map.of())).isEqualTo(SimOptions.defaults());
    }

    @Test
    void optionsSetCapacityGranularityLatencyAndFaults() {
        SimDevice device = (SimDevice) factory.open(3, "pp1/tp0", options(
                "capacityBytes", 8 * G, "granularity", 64 << 10, "latency", true,
                "faults", List.of(Map.of("op", "map", "page", 2, "error", "CUDA_ERROR_OUT_OF_MEMORY"))));
        assertThat(device.granularity()).isEqualTo(64 << 10);
        assertThat(device.memoryInfo().totalBytes()).isEqualTo(8 * G);
        assertThat(device.latency().enabled()).isTrue();
        assertThat(device.faults().faults()).containsExactly(Fault.error(DriverCall.MAP, "CUDA_ERROR_OUT_OF_MEMORY").onPage(2));
        assertThat(device.gpu()).isSameAs(SimGpus.gpu(key, 3));
        device.create(64 << 10);
        assertThat(device.driverNanos()).isPositive();
    }

    @Test
    void optionsRoundTripThroughTheirMap() {
        SimOptions options = SimOptions.parse(options("capacityBytes", 8 * G, "latency", true,
                "faults", List.of(Map.of("op", "unmap", "hang", true, "rank", "pp0/tp3"))));
        assertThat(SimOptions.parse(options.toMap())).isEqualTo(options);
    }

    static Stream<Arguments> badOptions() {
        return Stream.of(
                Arguments.of(Map.of("capacity", 1L << 30), "unknown sim option \"capacity\""),
                Arguments.of(Map.of("capacityBytes", "141GiB"), "capacityBytes must be an integer number of bytes"),
                Arguments.of(Map.of("capacityBytes", 1.5e9), "capacityBytes must be an integer number of bytes"),
                Arguments.of(Map.of("capacityBytes", -1L), "capacityBytes must be a positive number of bytes"),
                Arguments.of(Map.of("capacityBytes", 4096L), "capacityBytes must be at least the granularity"),
                Arguments.of(Map.of("granularity", 3 << 20), "granularity must be a power of two"),
                Arguments.of(Map.of("granularity", 2048), "granularity must be a power of two of at least 4096"),
                Arguments.of(Map.of("latency", "yes"), "latency must be true or false"),
                Arguments.of(Map.of("gpuKey", 7), "gpuKey must be a string"),
                Arguments.of(Map.of("gpuKey", " "), "gpuKey must not be blank"),
                Arguments.of(Map.of("faults", Map.of("op", "map")), "faults must be a list"),
                Arguments.of(Map.of("faults", List.of(Map.of("op", "mapp", "hang", true))), "faults[0].op"));
    }

    @ParameterizedTest
    @MethodSource("badOptions")
    void badOptionsAreRefusedBeforeAnythingOpens(Map<String, Object> bad, String why) {
        Map<String, Object> options = new HashMap<>(bad);
        options.putIfAbsent("gpuKey", key);
        assertThatThrownBy(() -> factory.open(0, "pp0/tp0", options))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining(why);
        assertThat(SimGpus.find(key, 0)).isEmpty();
    }

    @Test
    void unknownAndMistypedKeysListTheAcceptedOnes() {
        assertThatThrownBy(() -> factory.open(0, "pp0/tp0", options("colour", "red")))
                .hasMessageContaining("[capacityBytes, granularity, latency, faults, gpuKey]");
        assertThatThrownBy(() -> factory.open(0, "pp0/tp0", options("latency", 1)))
                .hasMessageContaining("[capacityBytes, granularity, latency, faults, gpuKey]");
    }

    @Test
    void badGpuIndexOrRankIsRefused() {
        assertThatThrownBy(() -> factory.open(-1, "pp0/tp0", options())).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("negative");
        assertThatThrownBy(() -> factory.open(0, "", options())).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("rank");
        assertThat(SimGpus.find(key, 0)).isEmpty();
    }

    @Test
    void devicesOnOneGpuIndexShareItsCapacity() {
        Map<String, Object> options = options("capacityBytes", 10 * G);
        SimDevice modelA = (SimDevice) factory.open(0, "pp0/tp0", options);
        SimDevice modelB = (SimDevice) factory.open(0, "pp0/tp0", options);
        SimDevice otherGpu = (SimDevice) factory.open(1, "pp0/tp1", options);
        assertThat(modelA.gpu()).isSameAs(modelB.gpu()).isNotSameAs(otherGpu.gpu());

        modelA.create(6 * G);
        modelB.create(4 * G);
        driverError(() -> modelA.create(G), "cuMemCreate", DeviceException.OUT_OF_MEMORY, 2);
        driverError(() -> modelB.create(G), "cuMemCreate", DeviceException.OUT_OF_MEMORY, 2);
        assertThat(otherGpu.create(10 * G)).isPositive();

        SimGpu gpu0 = SimGpus.gpu(key, 0);
        assertThat(modelB.memoryInfo().freeBytes()).isZero();
        assertThat(gpu0.bytesInUse()).isEqualTo(modelA.bytesInUse() + modelB.bytesInUse());
        assertThat(gpu0.handlesAlive()).isEqualTo(2);
        assertThat(gpu0.devices()).containsExactly(modelA, modelB);
        assertThat(gpu0.bytesInUseByRank()).containsExactly(Map.entry("pp0/tp0", 10 * G));
        assertThat(SimGpus.gpu(key, 1).bytesInUseByRank()).containsExactly(Map.entry("pp0/tp1", 10 * G));
        assertThat(SimGpus.gpus(key)).extracting(SimGpu::index).containsExactly(0, 1);

        modelA.close();
        assertThat(modelB.memoryInfo().freeBytes()).isEqualTo(6 * G);
    }

    @Test
    void aGpuKeepsItsShapeWhileDevicesAreOpenAndTakesANewOneAfter() {
        SimDevice first = (SimDevice) factory.open(0, "pp0/tp0", options("capacityBytes", 10 * G));
        assertThatThrownBy(() -> factory.open(0, "pp0/tp1", options("capacityBytes", 20 * G)))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("is open with capacityBytes " + 10 * G);
        first.close();

        SimDevice second = (SimDevice) factory.open(0, "pp0/tp1", options("capacityBytes", 20 * G));
        assertThat(second.memoryInfo().totalBytes()).isEqualTo(20 * G);
        assertThat(SimGpus.gpu(key, 0)).isSameAs(second.gpu()).isNotSameAs(first.gpu());
    }

    @Test
    void gpuKeysKeepTestsApart() {
        SimDevice mine = (SimDevice) factory.open(0, "pp0/tp0", options());
        SimDevice theirs = (SimDevice) factory.open(0, "pp0/tp0", Map.of("gpuKey", key + "-other"));
        try {
            assertThat(mine.gpu()).isNotSameAs(theirs.gpu());
            mine.create(G);
            assertThat(theirs.gpu().bytesInUse()).isZero();
        } finally {
            theirs.close();
            SimGpus.reset(key + "-other");
        }
    }

    @Test
    void lookingUpAGpuNobodyOpenedNamesTheOnesThatExist() {
        factory.open(2, "pp0/tp0", options());
        assertThat(SimGpus.find(key, 5)).isEmpty();
        assertThatThrownBy(() -> SimGpus.gpu(key, 5)).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("no sim gpu 5").hasMessageContaining(key + "/2");
    }

    @Test
    void resetForgetsGpusButOpenDevicesKeepTheirs() {
        SimDevice device = (SimDevice) factory.open(0, "pp0/tp0", options());
        SimGpus.reset(key);
        assertThat(SimGpus.find(key, 0)).isEmpty();
        device.create(G);
        assertThat(device.gpu().bytesInUse()).isEqualTo(G);
        SimDevice fresh = (SimDevice) factory.open(0, "pp0/tp0", options());
        assertThat(fresh.gpu()).isNotSameAs(device.gpu());
        assertThat(fresh.memoryInfo().freeBytes()).isEqualTo(141L << 30);
        device.close();
    }
}
