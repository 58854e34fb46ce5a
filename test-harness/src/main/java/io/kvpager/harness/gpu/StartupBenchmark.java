package io.kvpager.harness.gpu;

import io.kvpager.protocol.Owner;
import io.kvpager.Geometry;
import io.kvpager.protocol.CreateTensorsRequest;
import io.kvpager.protocol.DestroyTensorsRequest;
import io.kvpager.protocol.WorkerRequest;
import io.kvpager.Layout;
import io.kvpager.worker.RankWorker;
import io.kvpager.worker.RankWorkerOptions;
import io.vertx.core.Vertx;
import java.util.ArrayList;
import java.util.List;

/**
 * Start-up of one rank: {@code create-tensors} for 64 layer tensors (32 layers × K and V) of
 * 16 GiB virtual each, timed from request to reply, with and without zero-page backing, and
 * {@code destroy-tensors} after it.
 */
final class StartupBenchmark implements GpuSection {

    static final int LAYERS = 32;
    static final int KV_BUFFERS = 2;
    static final long PAGE_BYTES = 2L << 20;
    static final int PAGES = (int) ((16L << 30) / PAGE_BYTES);

    /** One start-up; {@code failure} is the worker's answer where create-tensors failed. */
    record Row(Layout layout, boolean zeroPage, double createMs, double destroyMs, String failure) {
    }

    /** The owner of the groups it creates: the benchmark stands in for a coordinator. */
    private static final Owner OWNER = new Owner("startup-benchmark", 1);

    @Override
    public String name() {
        return "startup";
    }

    /** Skipped by {@code --quick}: a zero-page start of {@code PER_LAYER} alone takes about 40 s. */
    @Override
    public Report run(Vertx vertx, boolean quick) {
        if (quick) {
            return new Report(List.of(), false);
        }
        System.out.println("== start-up: 64 tensors x 16 GiB virtual");
        List<String> lines = new ArrayList<>();
        lines.add("start-up of one rank: 64 tensors of 16 GiB virtual (ms)");
        lines.add("| layout | zero page | create-tensors | destroy-tensors |");
        lines.add("| --- | --- | --- | --- |");
        for (Row r : rows(vertx)) {
            lines.add(String.format("| %s | %s | %s | %.1f |", r.layout(), r.zeroPage() ? "yes" : "no",
                    r.failure() == null ? String.format("%.1f", r.createMs())
                            : String.format("failed after %.1f: %s", r.createMs(), r.failure()), r.destroyMs()));
        }
        return new Report(lines, false);
    }

    private static List<Row> rows(Vertx vertx) {
        List<Row> rows = new ArrayList<>();
        RankWorker config = Await.of(RankWorker.deploy(vertx, new RankWorkerOptions().setInstance("startup").setPp(0).setTp(0)
                .setDevice("cuda").setGpu(0)));
        try {
            int group = 0;
            for (Layout layout : Layout.values()) {
                for (boolean zeroPage : new boolean[] {false, true}) {
                    CreateTensorsRequest create = new CreateTensorsRequest(group, OWNER,
                            new Geometry(LAYERS, KV_BUFFERS, PAGE_BYTES, PAGE_BYTES, PAGES, layout), zeroPage, null);
                    long t0 = System.nanoTime();
                    String failure = null;
                    try {
                        request(vertx, config, create);
                    } catch (RuntimeException e) {
                        failure = e.getMessage();
                    }
                    long t1 = System.nanoTime();
                    request(vertx, config, new DestroyTensorsRequest(group, OWNER));
                    long t2 = System.nanoTime();
                    rows.add(new Row(layout, zeroPage, (t1 - t0) / 1e6, (t2 - t1) / 1e6, failure));
                    System.out.printf("  %-10s zeroPage=%-5s create %.1f ms, destroy %.1f ms%s%n", layout, zeroPage,
                            (t1 - t0) / 1e6, (t2 - t1) / 1e6, failure == null ? "" : ", FAILED: " + failure);
                    group++;
                }
            }
        } finally {
            Await.of(config.undeploy());
        }
        return rows;
    }

    private static void request(Vertx vertx, RankWorker config, WorkerRequest request) {
        Await.of(vertx.eventBus().request(config.address(), request.toJson(), request.action().delivery().setSendTimeout(600_000)));
    }
}
