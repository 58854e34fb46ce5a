package io.kvpager.sim;

import static org.assertj.core.api.Assertions.assertThat;

import io.kvpager.spi.DeviceException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import org.junit.jupiter.api.Test;

/** The GPU's books agree with its devices' whatever they do, alone or from several threads. */
class SharedGpuAccountingTest {

    static final long G = 64 << 10;
    static final int SLOTS = 8;

    enum Step { CREATE, MAP, UNMAP, RELEASE, ACCESS_AND_WRITE, CLOSE_AND_REOPEN }

    @Property(tries = 100)
    void booksBalanceAfterAnySequenceOfCalls(@ForAll("programs") List<List<Step>> programs) {
        SimGpu gpu = new SimGpu(12 * G, G);
        List<Rank> ranks = new ArrayList<>();
        for (int r = 0; r < programs.size(); r++) {
            ranks.add(new Rank(gpu, "pp0/tp" + r));
        }
        int longest = programs.stream().mapToInt(List::size).max().orElse(0);
        for (int i = 0; i < longest; i++) {
            for (int r = 0; r < ranks.size(); r++) {
                if (i < programs.get(r).size()) {
                    ranks.get(r).step(programs.get(r).get(i), i);
                }
                checkBooks(gpu);
            }
        }
        ranks.forEach(rank -> rank.device.close());
        assertThat(gpu.bytesInUse()).isZero();
        assertThat(gpu.handlesAlive()).isZero();
        assertThat(gpu.devices()).isEmpty();
    }

    @Provide
    Arbitrary<List<List<Step>>> programs() {
        return Arbitraries.of(Step.class).list().ofMaxSize(40).list().ofMinSize(1).ofMaxSize(3);
    }

    @Test
    void rankThreadsSharingAGpuNeverOvercommitIt() throws Exception {
        SimGpu gpu = new SimGpu(40 * G, G);
        int threads = 4;
        List<CompletableFuture<Integer>> runs = new ArrayList<>();
        try (ExecutorService pool = Executors.newFixedThreadPool(threads)) {
            for (int t = 0; t < threads; t++) {
                String rank = "pp0/tp" + t;
                runs.add(CompletableFuture.supplyAsync(() -> churn(gpu, rank), pool));
            }
            for (CompletableFuture<Integer> run : runs) {
                assertThat(run.get(30, TimeUnit.SECONDS)).isNotNegative();
            }
        }
        assertThat(gpu.peakBytesInUse()).isLessThanOrEqualTo(40 * G);
        assertThat(gpu.bytesInUse()).isZero();
        assertThat(gpu.handlesAlive()).isZero();
    }

    /** Fills a device up to 16 handles, drains it, many times; returns how often create ran out. */
    static int churn(SimGpu gpu, String rank) {
        SimDevice device = gpu.open(rank);
        device.attach();
        int misses = 0;
        long range = device.reserve(16 * G, 0);
        for (int round = 0; round < 200; round++) {
            List<Long> mapped = new ArrayList<>();
            for (int s = 0; s < 16; s++) {
                try {
                    long handle = device.create(G);
                    device.map(range + s * G, G, handle);
                    device.release(handle); // deferred until the unmap below
                    mapped.add(range + s * G);
                } catch (DeviceException e) {
                    assertThat(e.isOutOfMemory()).isTrue();
                    misses++;
                }
                assertThat(gpu.bytesInUse()).isLessThanOrEqualTo(gpu.capacityBytes());
            }
            for (long address : mapped) {
                device.unmap(address, G);
            }
        }
        assertThat(device.handlesAlive()).isZero();
        device.free(range, 16 * G);
        device.close();
        return misses;
    }

    static void checkBooks(SimGpu gpu) {
        List<SimDevice> devices = gpu.devices();
        assertThat(gpu.bytesInUse()).isEqualTo(devices.stream().mapToLong(SimDevice::bytesInUse).sum());
        assertThat(gpu.handlesAlive()).isEqualTo(devices.stream().mapToLong(SimDevice::handlesAlive).sum());
        assertThat(gpu.bytesInUse()).isBetween(0L, gpu.capacityBytes());
        assertThat(gpu.memoryInfo().freeBytes()).isEqualTo(gpu.capacityBytes() - gpu.bytesInUse());
        for (SimDevice d : devices) {
            assertThat(d.pendingReleases()).isLessThanOrEqualTo(d.handlesAlive());
            assertThat(d.mappedBytes()).isLessThanOrEqualTo(SLOTS * G);
        }
    }

    /** One rank's device with a range of {@link #SLOTS} slots and the handles it knows of. */
    static final class Rank {
        final SimGpu gpu;
        final String name;
        SimDevice device;
        long range;
        final List<Long> unreleased = new ArrayList<>();
        final Long[] slots = new Long[SLOTS];

        Rank(SimGpu gpu, String name) {
            this.gpu = gpu;
            this.name = name;
            open();
        }

        void open() {
            device = gpu.open(name);
            range = device.reserve(SLOTS * G, 0);
            unreleased.clear();
            Arrays.fill(slots, null);
        }

        void step(Step step, int i) {
            int slot = Math.floorMod(i * 7 + name.hashCode(), SLOTS);
            long address = range + slot * G;
            switch (step) {
                case CREATE -> {
                    try {
                        unreleased.add(device.create(G));
                    } catch (DeviceException e) {
                        assertThat(e.isOutOfMemory()).isTrue();
                    }
                }
                case MAP -> {
                    if (!unreleased.isEmpty() && slots[slot] == null) {
                        long handle = unreleased.get(i % unreleased.size());
                        device.map(address, G, handle);
                        slots[slot] = handle;
                    }
                }
                case UNMAP -> {
                    if (slots[slot] != null) {
                        device.unmap(address, G);
                        slots[slot] = null;
                    }
                }
                case RELEASE -> {
                    if (!unreleased.isEmpty()) {
                        device.release(unreleased.remove(i % unreleased.size()));
                    }
                }
                case ACCESS_AND_WRITE -> {
                    if (slots[slot] != null) {
                        device.setAccess(address, G);
                        device.write(address + 100, new byte[] {(byte) i});
                        assertThat(device.read(address + 100, 1)).containsExactly((byte) i);
                    }
                }
                case CLOSE_AND_REOPEN -> {
                    device.close();
                    open();
                }
            }
        }
    }
}
