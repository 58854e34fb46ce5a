package io.kvpager.sim;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Combinators;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

class FaultParseTest {

    static final String OOM = "CUDA_ERROR_OUT_OF_MEMORY";
    static final Map<String, Object> GOOD = Map.of("op", "map", "error", OOM);

    static Map<String, Object> entry(Object... keyValues) {
        Map<String, Object> map = new HashMap<>();
        for (int i = 0; i < keyValues.length; i += 2) {
            map.put((String) keyValues[i], keyValues[i + 1]);
        }
        return map;
    }

    static Stream<Arguments> badEntries() {
        return Stream.of(
                Arguments.of(entry("op", "mmap", "error", OOM), "faults[1].op", "unknown call \"mmap\""),
                Arguments.of(entry("op", 5, "error", OOM), "faults[1].op", "must be a string"),
                Arguments.of(entry("error", OOM), "faults[1].op", "is required"),
                Arguments.of(entry("op", "map", "error", OOM, "colour", "red"), "faults[1]", "unknown key \"colour\""),
                Arguments.of(entry("op", "map", "page", "5", "error", OOM), "faults[1].page", "must be an integer"),
                Arguments.of(entry("op", "map", "page", -1, "error", OOM), "faults[1].page", ">= 0, got -1"),
                Arguments.of(entry("op", "map", "nth", 0, "error", OOM), "faults[1].nth", ">= 1, got 0"),
                Arguments.of(entry("op", "map", "nth", 2.0, "error", OOM), "faults[1].nth", "must be an integer"),
                Arguments.of(entry("op", "map", "times", -3, "error", OOM), "faults[1].times", ">= 1, got -3"),
                Arguments.of(entry("op", "map", "delayMs", -5L), "faults[1].delayMs", ">= 0, got -5"),
                Arguments.of(entry("op", "map", "hang", "yes"), "faults[1].hang", "true or false"),
                Arguments.of(entry("op", "map", "rank", 3, "error", OOM), "faults[1].rank", "rank label"),
                Arguments.of(entry("op", "map", "rank", "", "error", OOM), "faults[1].rank", "rank label"),
                Arguments.of(entry("op", "map", "error", "OUT_OF_MEMORY"), "faults[1].error", "CUDA_ERROR_[A-Z_]+"),
                Arguments.of(entry("op", "map", "error", "cuda_error_unknown"), "faults[1].error", "CUDA_ERROR_[A-Z_]+"),
                Arguments.of(entry("op", "map", "error", 2), "faults[1].error", "CUDA_ERROR_[A-Z_]+"),
                Arguments.of(entry("op", "create", "page", 1, "error", OOM), "faults[1].page", "only to map, access and unmap"),
                Arguments.of(entry("op", "map"), "faults[1]", "does nothing"),
                Arguments.of(entry("op", "map", "hang", false, "delayMs", 0), "faults[1]", "does nothing"));
    }

    @ParameterizedTest
    @MethodSource("badEntries")
    void aBadEntryIsNamedWithItsField(Map<String, Object> bad, String where, String why) {
        assertThatThrownBy(() -> FaultPlan.parse(List.of(GOOD, bad)))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageStartingWith(where + ":")
                .hasMessageContaining(why);
    }

    @Test
    void theListAndItsEntriesMustBeListsAndObjects() {
        assertThatThrownBy(() -> FaultPlan.parse("map")).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("faults must be a list");
        assertThatThrownBy(() -> FaultPlan.parse(List.of(GOOD, "map"))).isInstanceOf(IllegalArgumentException.class)
                .hasMessageStartingWith("faults[1]: must be an object");
        assertThatThrownBy(() -> FaultPlan.parse(List.of(Map.of(1, "x")))).isInstanceOf(IllegalArgumentException.class)
                .hasMessageStartingWith("faults[0]: keys must be strings");
    }

    @Test
    void aPlanThatFailsToParseArmsNothing() {
        FaultPlan plan = new FaultPlan();
        plan.add(GOOD);
        assertThatThrownBy(() -> plan.add(entry("op", "map", "nth", -1, "error", OOM)))
                .isInstanceOf(IllegalArgumentException.class).hasMessageStartingWith("faults[1].nth:");
        assertThat(plan.faults()).hasSize(1);
    }

    @Test
    void shortAndDriverNamesBothWork() {
        FaultPlan plan = FaultPlan.parse(List.of(
                entry("op", "cuMemAddressReserve", "error", OOM),
                entry("op", "free", "error", OOM),
                entry("op", "cuMemCreate", "error", OOM),
                entry("op", "release", "error", OOM),
                entry("op", "cuMemMap", "error", OOM),
                entry("op", "access", "error", OOM),
                entry("op", "cuMemUnmap", "error", OOM),
                entry("op", "cuCtxSynchronize", "error", OOM),
                entry("op", "cuMemSetAccess", "error", OOM)));
        assertThat(plan.faults()).extracting(Fault::op).containsExactly(DriverCall.values()[0], DriverCall.FREE,
                DriverCall.CREATE, DriverCall.RELEASE, DriverCall.MAP, DriverCall.ACCESS, DriverCall.UNMAP,
                DriverCall.SYNCHRONIZE, DriverCall.ACCESS);
    }

    @Test
    void fieldsAndDefaultsAreRead() {
        List<Fault> faults = FaultPlan.parse(List.of(
                entry("op", "map", "rank", "pp0/tp1", "page", 5, "error", OOM),
                entry("op", "unmap", "delayMs", 200L),
                entry("op", "unmap", "hang", true),
                entry("op", "create", "nth", 3, "error", OOM),
                entry("op", "create", "nth", 3L, "times", 2, "error", OOM),
                entry("op", "create", "times", 4, "error", OOM))).faults();

        assertThat(faults.get(0)).isEqualTo(Fault.error(DriverCall.MAP, OOM).onRank("pp0/tp1").onPage(5));
        assertThat(faults.get(1)).isEqualTo(Fault.delay(DriverCall.UNMAP, 200));
        assertThat(faults.get(2)).isEqualTo(Fault.hang(DriverCall.UNMAP));
        assertThat(faults.get(3)).extracting(Fault::nth, Fault::times).containsExactly(3L, 1L); // nth alone fires once
        assertThat(faults.get(4)).extracting(Fault::nth, Fault::times).containsExactly(3L, 2L);
        assertThat(faults.get(5)).extracting(Fault::nth, Fault::times).containsExactly(1L, 4L);
        assertThat(faults.get(1)).extracting(Fault::nth, Fault::times).containsExactly(1L, Fault.UNLIMITED);
    }

    @Test
    void entriesMayBeIterablesOfMapEntriesAsJsonObjectsAre() {
        Iterable<Map.Entry<String, Object>> jsonLike = List.of(Map.entry("op", "map"), Map.entry("error", OOM));
        assertThat(FaultPlan.parse(List.of(jsonLike)).faults()).containsExactly(Fault.error(DriverCall.MAP, OOM));
    }

    @Test
    void errorNamesCarryTheDriversNumbers() {
        assertThat(CuResult.valueOf("CUDA_ERROR_INVALID_VALUE")).isEqualTo(1);
        assertThat(CuResult.valueOf("CUDA_ERROR_OUT_OF_MEMORY")).isEqualTo(2);
        assertThat(CuResult.valueOf("CUDA_ERROR_NOT_INITIALIZED")).isEqualTo(3);
        assertThat(CuResult.valueOf("CUDA_ERROR_ILLEGAL_ADDRESS")).isEqualTo(700);
        assertThat(CuResult.valueOf("CUDA_ERROR_NOT_SUPPORTED")).isEqualTo(801);
        assertThat(CuResult.valueOf("CUDA_ERROR_UNKNOWN")).isEqualTo(999);
        assertThat(CuResult.valueOf("CUDA_ERROR_SOMETHING_NEW")).isEqualTo(999);
        assertThat(CuResult.isErrorName("CUDA_ERROR_SOMETHING_NEW")).isTrue();
        assertThat(CuResult.isErrorName("CUDA_SUCCESS")).isFalse();
    }

    @Test
    void builtFaultsAreCheckedToo() {
        assertThatThrownBy(() -> Fault.error(DriverCall.CREATE, OOM).onPage(1)).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> Fault.error(DriverCall.MAP, OOM).onPage(-1)).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> Fault.error(DriverCall.MAP, "oops")).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> Fault.delay(DriverCall.MAP, 0)).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> Fault.hang(DriverCall.MAP).nth(0)).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> Fault.hang(DriverCall.MAP).times(0)).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> Fault.hang(null)).isInstanceOf(IllegalArgumentException.class);
    }

    @Property(tries = 200)
    void toMapParsesBackToTheSameFault(@ForAll("faults") Fault fault) {
        assertThat(Fault.parse(fault.toMap(), 0)).isEqualTo(fault);
    }

    @Provide
    Arbitrary<Fault> faults() {
        Arbitrary<DriverCall> ops = Arbitraries.of(DriverCall.class);
        Arbitrary<String> ranks = Arbitraries.of("pp0/tp0", "pp1/tp3").injectNull(0.5);
        Arbitrary<Long> pages = Arbitraries.longs().between(Fault.ANY_PAGE, 1000);
        Arbitrary<Long> nths = Arbitraries.longs().between(1, 10);
        Arbitrary<Long> times = Arbitraries.oneOf(Arbitraries.longs().between(1, 5), Arbitraries.just(Fault.UNLIMITED));
        Arbitrary<String> errors = Arbitraries.of("CUDA_ERROR_OUT_OF_MEMORY", "CUDA_ERROR_SOMETHING").injectNull(0.4);
        Arbitrary<Long> delays = Arbitraries.longs().between(0, 500);
        Arbitrary<Boolean> hangs = Arbitraries.of(true, false);
        return Combinators.combine(ops, ranks, pages, nths, times, errors, delays, hangs)
                .as((op, rank, page, nth, n, error, delay, hang) -> new Fault(op, rank, op.takesPage() ? page : Fault.ANY_PAGE,
                        nth, n, error, delay, hang || (error == null && delay == 0)));
    }
}
