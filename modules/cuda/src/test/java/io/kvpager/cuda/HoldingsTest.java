package io.kvpager.cuda;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatCode;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.kvpager.spi.DeviceException;
import org.junit.jupiter.api.Test;

class HoldingsTest {

    private static final long G = 2L << 20;
    private static final long BASE = 0x7f0000000000L;

    private final Holdings holdings = new Holdings();

    @Test
    void freeNeedsOneWholeReservationWithNothingMappedInside() {
        holdings.reserved(BASE, 4 * G);
        holdings.created(0xa0, G);
        holdings.mapped(BASE + G, G, 0xa0);

        assertRefused(() -> holdings.checkFree(BASE + G, 3 * G), "cuMemAddressFree", DeviceException.INVALID_VALUE,
                "no reservation starts at");
        assertRefused(() -> holdings.checkFree(BASE, 2 * G), "cuMemAddressFree", DeviceException.INVALID_VALUE,
                "is " + 4 * G + " bytes, not " + 2 * G);
        assertRefused(() -> holdings.checkFree(BASE, 4 * G), "cuMemAddressFree", DeviceException.INVALID_VALUE,
                "1 mapping(s) still inside");

        holdings.unmapped(BASE + G);
        assertThatCode(() -> holdings.checkFree(BASE, 4 * G)).doesNotThrowAnyException();
        holdings.freed(BASE);
        assertThat(holdings.counts()).isEqualTo(new Holdings.Counts(0, 1, 0));
    }

    @Test
    void onlyLiveHandlesPass() {
        holdings.created(0xa0, G);
        assertThatCode(() -> holdings.checkLive("cuMemMap", 0xa0)).doesNotThrowAnyException();
        holdings.released(0xa0);
        assertRefused(() -> holdings.checkLive("cuMemMap", 0xa0), "cuMemMap", DeviceException.INVALID_VALUE,
                "handle 0xa0 is not a live handle");
    }

    @Test
    void unmapMustMatchOneMapCall() {
        holdings.mapped(BASE, 2 * G, 0xa0);
        assertRefused(() -> holdings.checkUnmap(BASE + G, G), "cuMemUnmap", DeviceException.INVALID_VALUE,
                "nothing is mapped at");
        assertRefused(() -> holdings.checkUnmap(BASE, G), "cuMemUnmap", DeviceException.INVALID_VALUE,
                "is " + 2 * G + " bytes, not " + G);
        assertThatCode(() -> holdings.checkUnmap(BASE, 2 * G)).doesNotThrowAnyException();
    }

    @Test
    void copiesNeedAdjacentAccessibleMappings() {
        holdings.mapped(BASE, G, 0xa0);
        holdings.mapped(BASE + G, G, 0xb0);
        holdings.mapped(BASE + 3 * G, G, 0xc0);

        assertRefused(() -> holdings.checkAccessible("cuMemcpyHtoD", BASE, 16), "cuMemcpyHtoD",
                DeviceException.ILLEGAL_ADDRESS, "cuMemSetAccess was not called");

        holdings.accessGranted(BASE, 2 * G);
        assertThatCode(() -> holdings.checkAccessible("cuMemcpyHtoD", BASE + G - 8, 16)).doesNotThrowAnyException();
        assertThatCode(() -> holdings.checkAccessible("cuMemcpyHtoD", BASE, 2 * G)).doesNotThrowAnyException();
        assertRefused(() -> holdings.checkAccessible("cuMemcpyDtoH", BASE + 2 * G - 8, 16), "cuMemcpyDtoH",
                DeviceException.ILLEGAL_ADDRESS, "0x" + Long.toHexString(BASE + 2 * G) + " is not mapped");
        assertRefused(() -> holdings.checkAccessible("cuMemsetD8", BASE - 1, 2), "cuMemsetD8",
                DeviceException.ILLEGAL_ADDRESS, "is not mapped");

        holdings.accessGranted(BASE + 3 * G, G);
        assertThatCode(() -> holdings.checkAccessible("cuMemsetD8", BASE + 3 * G, G)).doesNotThrowAnyException();
    }

    @Test
    void accessCoversOnlyWholeMappingsInsideTheRange() {
        holdings.mapped(BASE, 2 * G, 0xa0);
        holdings.accessGranted(BASE, G);
        assertRefused(() -> holdings.checkAccessible("cuMemcpyDtoH", BASE, 8), "cuMemcpyDtoH",
                DeviceException.ILLEGAL_ADDRESS, "cuMemSetAccess was not called");
    }

    @Test
    void clearForgetsEverything() {
        holdings.reserved(BASE, G);
        holdings.created(0xa0, G);
        holdings.mapped(BASE, G, 0xa0);
        assertThat(holdings.counts()).isEqualTo(new Holdings.Counts(1, 1, 1));
        assertThat(holdings.mappings()).extracting(Holdings.Mapping::handle).containsExactly(0xa0L);
        holdings.clear();
        assertThat(holdings.counts()).isEqualTo(new Holdings.Counts(0, 0, 0));
    }

    private static void assertRefused(Runnable check, String call, String errorName, String detail) {
        assertThatThrownBy(check::run).isInstanceOfSatisfying(DeviceException.class, e -> {
            assertThat(e.call()).isEqualTo(call);
            assertThat(e.errorName()).isEqualTo(errorName);
            assertThat(e.getMessage()).contains(detail).contains("refused before calling the driver");
        });
    }
}
