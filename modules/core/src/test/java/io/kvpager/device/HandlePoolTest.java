package io.kvpager.device;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.kvpager.spi.DeviceException;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import org.junit.jupiter.api.Test;

class HandlePoolTest {

    private static final long MIB2 = 2L << 20;

    private final CountingDevice device = new CountingDevice(64 * MIB2);

    @Test
    void takeCreatesWhenNothingIsIdleAndReusesWhatWasGiven() {
        HandlePool pool = new HandlePool(device, 4);
        long a = pool.take(MIB2);
        assertThat(pool.creates()).isEqualTo(1);
        pool.give(a);
        assertThat(pool.idle()).isEqualTo(1);
        assertThat(pool.idleBytes()).isEqualTo(MIB2);

        long again = pool.take(MIB2);

        assertThat(again).isEqualTo(a);
        assertThat(pool.reuses()).isEqualTo(1);
        assertThat(device.creates).isEqualTo(1);
        assertThat(pool.lent()).isEqualTo(1);
        assertThat(pool.idle()).isZero();
    }

    @Test
    void sizesArePooledApart() {
        HandlePool pool = new HandlePool(device, 4);
        long small = pool.take(MIB2);
        pool.give(small);

        long large = pool.take(4 * MIB2);

        assertThat(large).isNotEqualTo(small);
        assertThat(pool.idle(MIB2)).isEqualTo(1);
        assertThat(pool.idle(4 * MIB2)).isZero();
        assertThat(device.creates).isEqualTo(2);
    }

    @Test
    void giveReleasesBeyondTheBound() {
        HandlePool pool = new HandlePool(device, 2);
        long[] handles = {pool.take(MIB2), pool.take(MIB2), pool.take(MIB2)};
        for (long h : handles) {
            pool.give(h);
        }
        assertThat(pool.idle()).isEqualTo(2);
        assertThat(pool.releases()).isEqualTo(1);
        assertThat(device.live()).isEqualTo(2);
        assertThat(pool.lent()).isZero();
    }

    @Test
    void boundZeroKeepsNothing() {
        HandlePool pool = new HandlePool(device, 0);
        pool.give(pool.take(MIB2));
        assertThat(device.live()).isZero();
        assertThat(pool.idle()).isZero();
    }

    @Test
    void prefillCreatesUpToTheAskedIdleCountOnly() {
        HandlePool pool = new HandlePool(device, 8);
        assertThat(pool.prefill(MIB2, 5)).isEqualTo(5);
        assertThat(pool.prefill(MIB2, 5)).isZero();
        assertThat(pool.prefill(MIB2, 6)).isEqualTo(1);
        assertThat(pool.idle(MIB2)).isEqualTo(6);
        assertThat(device.creates).isEqualTo(6);

        for (int i = 0; i < 6; i++) {
            pool.take(MIB2);
        }
        assertThat(device.creates).as("takes after a prefill create nothing").isEqualTo(6);
        assertThat(pool.reuses()).isEqualTo(6);
    }

    @Test
    void prefillBeyondTheBoundIsRefusedBeforeCreatingAnything() {
        HandlePool pool = new HandlePool(device, 4);
        pool.prefill(4 * MIB2, 2);

        assertThatThrownBy(() -> pool.prefill(MIB2, 3))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("bound of 4");
        assertThat(device.creates).isEqualTo(2);
        assertThat(pool.idle()).isEqualTo(2);
    }

    @Test
    void outOfMemoryFromCreateSurfacesAndChangesNothing() {
        CountingDevice small = new CountingDevice(3 * MIB2);
        HandlePool pool = new HandlePool(small, 4);
        long a = pool.take(MIB2);
        pool.take(MIB2);

        assertThatThrownBy(() -> pool.take(2 * MIB2))
                .isInstanceOfSatisfying(DeviceException.class, e -> {
                    assertThat(e.isOutOfMemory()).isTrue();
                    assertThat(e.call()).isEqualTo("cuMemCreate");
                });
        assertThat(pool.lent()).isEqualTo(2);
        assertThat(pool.creates()).isEqualTo(2);

        pool.give(a);
        assertThat(pool.take(MIB2)).as("the idle handle still serves").isEqualTo(a);
    }

    @Test
    void prefillStopsAtOutOfMemoryKeepingWhatItMade() {
        CountingDevice small = new CountingDevice(3 * MIB2);
        HandlePool pool = new HandlePool(small, 8);

        assertThatThrownBy(() -> pool.prefill(MIB2, 5))
                .isInstanceOfSatisfying(DeviceException.class, e -> assertThat(e.isOutOfMemory()).isTrue());
        assertThat(pool.idle(MIB2)).isEqualTo(3);
        assertThat(small.live()).isEqualTo(3);
    }

    @Test
    void givingAForeignOrReturnedHandleIsRefusedWithoutChange() {
        HandlePool pool = new HandlePool(device, 4);
        long a = pool.take(MIB2);
        pool.give(a);

        assertThatThrownBy(() -> pool.give(a))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("given back already");
        assertThatThrownBy(() -> pool.give(0xdeadL))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("0xdead");
        assertThat(pool.idle()).isEqualTo(1);
        assertThat(device.live()).isEqualTo(1);
    }

    @Test
    void aLowerBoundReleasesTheSurplusAndAHigherOneKeepsMore() {
        HandlePool pool = new HandlePool(device, 4);
        pool.prefill(MIB2, 4);

        assertThat(pool.setBound(1)).isEqualTo(3);
        assertThat(pool.idle()).isEqualTo(1);
        assertThat(device.live()).isEqualTo(1);

        assertThat(pool.setBound(3)).isZero();
        long[] lent = {pool.take(MIB2), pool.take(MIB2), pool.take(MIB2)};
        for (long h : lent) {
            pool.give(h);
        }
        assertThat(pool.idle()).isEqualTo(3);
        assertThatThrownBy(() -> pool.setBound(-1)).isInstanceOf(IllegalArgumentException.class);
        assertThat(pool.bound()).isEqualTo(3);
    }

    @Test
    void trimReleasesTheLongestIdleAndKeepsTheBound() {
        HandlePool pool = new HandlePool(device, 4);
        long first = pool.take(MIB2);
        long second = pool.take(MIB2);
        pool.give(first);
        pool.give(second);

        assertThat(pool.trim(1)).isEqualTo(1);

        assertThat(pool.idle()).isEqualTo(1);
        assertThat(pool.take(MIB2)).as("the most recently given stays").isEqualTo(second);
        assertThat(pool.bound()).isEqualTo(4);
        assertThat(pool.trim(5)).isZero();
        assertThatThrownBy(() -> pool.trim(-1)).isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void badArgumentsAreRefused() {
        assertThatThrownBy(() -> new HandlePool(device, -1)).isInstanceOf(IllegalArgumentException.class);
        HandlePool pool = new HandlePool(device, 4);
        assertThatThrownBy(() -> pool.take(0)).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> pool.take(-MIB2)).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> pool.prefill(MIB2, -1)).isInstanceOf(IllegalArgumentException.class);
        assertThat(device.creates).isZero();
    }

    @Test
    void closeReleasesIdleHandlesAndLentOnesOnTheirReturn() {
        HandlePool pool = new HandlePool(device, 4);
        pool.prefill(MIB2, 3);
        long held = pool.take(MIB2);

        pool.close();

        assertThat(device.live()).as("only the lent handle is left").isEqualTo(1);
        assertThat(pool.idle()).isZero();
        assertThatThrownBy(() -> pool.take(MIB2)).isInstanceOf(IllegalStateException.class);
        pool.give(held);
        assertThat(device.live()).isZero();
        pool.close();
    }

    @Property(tries = 200)
    void idleAndLentHandlesAreExactlyTheDevicesLiveOnes(@ForAll("operations") List<Integer> operations) {
        CountingDevice counting = new CountingDevice(64 * MIB2);
        HandlePool pool = new HandlePool(counting, 5);
        List<Long> held = new ArrayList<>();
        for (int op : operations) {
            long size = (1 + (op & 1)) * MIB2;
            switch (op % 3) {
                case 0 -> held.add(pool.take(size));
                case 1 -> {
                    if (!held.isEmpty()) {
                        pool.give(held.remove(held.size() - 1));
                    }
                }
                default -> pool.prefill(size, Math.min(pool.idle(size) + 1, pool.idle(size) + pool.bound() - pool.idle()));
            }
            assertThat(pool.idle()).isLessThanOrEqualTo(pool.bound());
            assertThat(pool.idle() + pool.lent()).isEqualTo(counting.live());
            assertThat(pool.lent()).isEqualTo(held.size());
            Set<Long> distinct = new HashSet<>(held);
            assertThat(distinct).hasSameSizeAs(held);
        }
        pool.close();
        held.forEach(pool::give);
        assertThat(counting.live()).isZero();
        assertThat(counting.used()).isZero();
    }

    @Provide
    Arbitrary<List<Integer>> operations() {
        return Arbitraries.integers().between(0, 11).list().ofMaxSize(60);
    }
}
