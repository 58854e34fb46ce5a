package io.kvpager.harness.gpu;

import static org.junit.platform.engine.discovery.DiscoverySelectors.selectPackage;

import io.kvpager.spi.DeviceFactory;
import io.vertx.core.Vertx;
import java.io.PrintWriter;
import java.util.List;
import java.util.Optional;
import org.junit.platform.launcher.Launcher;
import org.junit.platform.launcher.LauncherDiscoveryRequest;
import org.junit.platform.launcher.TagFilter;
import org.junit.platform.launcher.core.LauncherDiscoveryRequestBuilder;
import org.junit.platform.launcher.core.LauncherFactory;
import org.junit.platform.launcher.listeners.SummaryGeneratingListener;
import org.junit.platform.launcher.listeners.TestExecutionSummary;

/**
 * Everything kvpager checks on a real GPU, in one call: the GPU test suite (every JUnit test
 * tagged {@code gpu} on the classpath), then the map-path benchmark against the raw driver floor
 * and the start-up benchmark, with a short table printed last. Exits non-zero when a test failed.
 *
 * <p>Arguments: {@code [--quick]} runs the benchmark with TP=1 and batches of 1 and 16 only.
 */
public final class GpuRunner {

    private GpuRunner() {
    }

    public static void main(String[] args) {
        Optional<String> unavailable = DeviceFactory.forKind("cuda").unavailableReason();
        if (unavailable.isPresent()) {
            System.err.println("kvpager GPU runner: no CUDA device: " + unavailable.get());
            System.exit(2);
        }
        boolean quick = List.of(args).contains("--quick");

        System.out.println("== GPU tests (tag gpu)");
        TestExecutionSummary tests = runTests();
        tests.printFailuresTo(new PrintWriter(System.out, true), 20);

        Vertx vertx = Vertx.vertx();
        List<MapPathBenchmark.Row> map;
        List<StartupBenchmark.Row> startup;
        try {
            System.out.println("== map path: raw driver floor / kvpager, median per batch");
            map = new MapPathBenchmark(vertx).run(quick ? new int[] {1} : new int[] {1, 4},
                    quick ? new int[] {1, 16} : new int[] {1, 16, 256});
            System.out.println("== start-up: 64 tensors x 16 GiB virtual");
            startup = quick ? List.of() : new StartupBenchmark(vertx).run();
        } finally {
            Await.of(vertx.close());
        }

        System.out.println();
        System.out.printf("GPU tests: %d passed, %d failed, %d skipped%n", tests.getTestsSucceededCount(),
                tests.getTestsFailedCount(),
                tests.getTestsSkippedCount() + tests.getTestsAbortedCount());
        System.out.printf("map path (us per batch, %d layers x %d buffers x %d MiB pages; PAGE_MAJOR page id = one %d MiB handle)%n",
                MapPathBenchmark.LAYERS, MapPathBenchmark.KV_BUFFERS, MapPathBenchmark.PAGE_BYTES >> 20,
                MapPathBenchmark.LAYERS * MapPathBenchmark.KV_BUFFERS * (MapPathBenchmark.PAGE_BYTES >> 20));
        System.out.println("| layout | TP | batch | map floor | map kvpager | ratio | unmap floor | unmap kvpager | ratio |");
        System.out.println("| --- | --- | --- | --- | --- | --- | --- | --- | --- |");
        for (MapPathBenchmark.Row r : map) {
            System.out.printf("| %s | %d | %d | %.1f | %.1f | %.2fx | %.1f | %.1f | %.2fx |%n", r.layout(), r.tp(), r.batch(),
                    r.floorMap(), r.kvMap(), r.mapRatio(), r.floorUnmap(), r.kvUnmap(), r.unmapRatio());
        }
        if (!startup.isEmpty()) {
            System.out.println("start-up of one rank: 64 tensors of 16 GiB virtual (ms)");
            System.out.println("| layout | zero page | create-tensors | destroy-tensors |");
            System.out.println("| --- | --- | --- | --- |");
            for (StartupBenchmark.Row r : startup) {
                System.out.printf("| %s | %s | %.1f | %.1f |%n", r.layout(), r.zeroPage() ? "yes" : "no", r.createMs(),
                        r.destroyMs());
            }
        }
        System.exit(tests.getTestsFailedCount() == 0 ? 0 : 1);
    }

    private static TestExecutionSummary runTests() {
        LauncherDiscoveryRequest request = LauncherDiscoveryRequestBuilder.request()
                .selectors(selectPackage("io.kvpager"))
                .filters(TagFilter.includeTags("gpu"))
                .build();
        Launcher launcher = LauncherFactory.create();
        SummaryGeneratingListener listener = new SummaryGeneratingListener();
        launcher.execute(request, listener);
        return listener.getSummary();
    }
}
