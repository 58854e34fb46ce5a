package io.kvpager.cuda;

import static java.lang.foreign.ValueLayout.JAVA_LONG;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * The raw driver's cost for the calls kvpager makes per page (the floor), straight through
 * {@link CudaDriver} with preallocated structs, beside the same work through {@link CudaDevice}:
 * the ratio says what kvpager's bookkeeping adds. Host clock around synchronous driver calls;
 * warm-up first; medians.
 */
final class DriverFloor {

    static final int WARM_UP = 20;

    /** One measured row: median microseconds of the raw calls and of the same via the device. */
    record Row(String what, double raw, double device) {
    }

    private final CudaDevice device;
    private final int repeats;
    private final MemorySegment prop;
    private final MemorySegment access;
    private final MemorySegment out;

    DriverFloor(CudaDevice device, int repeats, Arena arena) {
        this.device = device;
        this.repeats = repeats;
        this.prop = AllocationProp.pinnedOn(arena, 0);
        this.access = AccessDesc.readWriteOn(arena, 0);
        this.out = arena.allocate(JAVA_LONG, 2);
    }

    /** cuMemCreate alone, raw and through the device. */
    Row create(long size) {
        double[] raw = new double[repeats];
        double[] dev = new double[repeats];
        for (int i = -WARM_UP; i < repeats; i++) {
            long t0 = System.nanoTime();
            long h = CudaDriver.memCreate(out, size, prop);
            long t1 = System.nanoTime();
            CudaDriver.memRelease(h);
            long t2 = System.nanoTime();
            long d = device.create(size);
            long t3 = System.nanoTime();
            device.release(d);
            if (i >= 0) {
                raw[i] = (t1 - t0) / 1e3;
                dev[i] = (t3 - t2) / 1e3;
            }
        }
        return new Row("cuMemCreate " + mib(size), median(raw), median(dev));
    }

    /** Map + set access, then unmap + release, of one handle of {@code size}: two rows. */
    Row[] mapAndUnmap(long size) {
        long base = device.reserve(size, 0);
        double[][] raw = {new double[repeats], new double[repeats]};
        double[][] dev = {new double[repeats], new double[repeats]};
        try {
            for (int i = -WARM_UP; i < repeats; i++) {
                long h = CudaDriver.memCreate(out, size, prop);
                long t0 = System.nanoTime();
                CudaDriver.memMap(base, size, 0L, h);
                CudaDriver.memSetAccess(base, size, access);
                long t1 = System.nanoTime();
                CudaDriver.memUnmap(base, size);
                CudaDriver.memRelease(h);
                long t2 = System.nanoTime();

                long d = device.create(size);
                long t3 = System.nanoTime();
                device.map(base, size, d);
                device.setAccess(base, size);
                long t4 = System.nanoTime();
                device.unmap(base, size);
                device.release(d);
                long t5 = System.nanoTime();
                if (i >= 0) {
                    raw[0][i] = (t1 - t0) / 1e3;
                    raw[1][i] = (t2 - t1) / 1e3;
                    dev[0][i] = (t4 - t3) / 1e3;
                    dev[1][i] = (t5 - t4) / 1e3;
                }
            }
        } finally {
            device.free(base, size);
        }
        return new Row[] {
            new Row("map + setAccess, one " + mib(size) + " handle", median(raw[0]), median(dev[0])),
            new Row("unmap + release, one " + mib(size) + " handle", median(raw[1]), median(dev[1]))
        };
    }

    /**
     * One PER_LAYER page id: {@code tensors} handles of {@code pageBytes}, one per tensor range,
     * created beforehand (as a {@link io.kvpager.device.HandlePool} does) and not timed.
     */
    Row[] perLayerPage(int tensors, long pageBytes) {
        long[] ranges = new long[tensors];
        for (int t = 0; t < tensors; t++) {
            ranges[t] = device.reserve(pageBytes, 0);
        }
        double[][] raw = {new double[repeats], new double[repeats]};
        double[][] dev = {new double[repeats], new double[repeats]};
        long[] handles = new long[tensors];
        try {
            for (int i = -WARM_UP; i < repeats; i++) {
                for (int t = 0; t < tensors; t++) {
                    handles[t] = CudaDriver.memCreate(out, pageBytes, prop);
                }
                long t0 = System.nanoTime();
                for (int t = 0; t < tensors; t++) {
                    CudaDriver.memMap(ranges[t], pageBytes, 0L, handles[t]);
                    CudaDriver.memSetAccess(ranges[t], pageBytes, access);
                }
                long t1 = System.nanoTime();
                for (int t = 0; t < tensors; t++) {
                    CudaDriver.memUnmap(ranges[t], pageBytes);
                    CudaDriver.memRelease(handles[t]);
                }
                long t2 = System.nanoTime();

                for (int t = 0; t < tensors; t++) {
                    handles[t] = device.create(pageBytes);
                }
                long t3 = System.nanoTime();
                for (int t = 0; t < tensors; t++) {
                    device.map(ranges[t], pageBytes, handles[t]);
                    device.setAccess(ranges[t], pageBytes);
                }
                long t4 = System.nanoTime();
                for (int t = 0; t < tensors; t++) {
                    device.unmap(ranges[t], pageBytes);
                    device.release(handles[t]);
                }
                long t5 = System.nanoTime();
                if (i >= 0) {
                    raw[0][i] = (t1 - t0) / 1e3;
                    raw[1][i] = (t2 - t1) / 1e3;
                    dev[0][i] = (t4 - t3) / 1e3;
                    dev[1][i] = (t5 - t4) / 1e3;
                }
            }
        } finally {
            for (long r : ranges) {
                device.free(r, pageBytes);
            }
        }
        String page = "page id PER_LAYER " + tensors + " x " + mib(pageBytes);
        return new Row[] {
            new Row(page + ": map + setAccess", median(raw[0]), median(dev[0])),
            new Row(page + ": unmap + release", median(raw[1]), median(dev[1]))
        };
    }

    /** cuCtxSynchronize on an idle device. */
    Row synchronize() {
        double[] raw = new double[repeats];
        double[] dev = new double[repeats];
        for (int i = -WARM_UP; i < repeats; i++) {
            long t0 = System.nanoTime();
            CudaDriver.ctxSynchronize();
            long t1 = System.nanoTime();
            device.synchronize();
            long t2 = System.nanoTime();
            if (i >= 0) {
                raw[i] = (t1 - t0) / 1e3;
                dev[i] = (t2 - t1) / 1e3;
            }
        }
        return new Row("cuCtxSynchronize, idle", median(raw), median(dev));
    }

    static List<String> table(String title, List<Row> rows) {
        List<String> lines = new ArrayList<>();
        lines.add(title);
        lines.add(String.format("%-52s %12s %12s %7s", "operation (median us)", "raw driver", "CudaDevice", "ratio"));
        for (Row r : rows) {
            lines.add(String.format("%-52s %12.1f %12.1f %7.2f", r.what(), r.raw(), r.device(), r.device() / r.raw()));
        }
        return lines;
    }

    static double median(double[] values) {
        double[] sorted = values.clone();
        Arrays.sort(sorted);
        int n = sorted.length;
        return n % 2 == 1 ? sorted[n / 2] : (sorted[n / 2 - 1] + sorted[n / 2]) / 2;
    }

    private static String mib(long bytes) {
        return (bytes >> 20) + " MiB";
    }
}
