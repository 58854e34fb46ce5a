package io.kvpager.harness.gpu;

import static org.junit.platform.engine.discovery.DiscoverySelectors.selectClass;

import io.kvpager.spi.DeviceFactory;
import io.vertx.core.Vertx;
import java.io.File;
import java.io.IOException;
import java.io.PrintWriter;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.jar.JarEntry;
import java.util.jar.JarFile;
import java.util.List;
import java.util.Optional;
import org.junit.platform.engine.discovery.ClassSelector;
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
        java.util.Map<Integer, Double> busFloor = new java.util.TreeMap<>();
        try {
            System.out.println("== map path: raw driver floor / kvpager, median per batch");
            MapPathBenchmark benchmark = new MapPathBenchmark(vertx);
            benchmark.warmUp(quick ? new int[] {1} : new int[] {1, 4}, 3000);
            map = benchmark.run(quick ? new int[] {1} : new int[] {1, 4},
                    quick ? new int[] {1, 16} : new int[] {1, 16, 256});
            System.out.println("== event-bus floor: joined fan-out to echo ranks on one-thread pools");
            for (int tp : quick ? new int[] {1} : new int[] {1, 4}) {
                busFloor.put(tp, BusFloor.medianMicros(vertx, tp, 500));
                System.out.printf("  tp=%d %.1f us%n", tp, busFloor.get(tp));
            }
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
        busFloor.forEach((tp, us) -> System.out.printf("event-bus fan-out floor, TP=%d: %.1f us per batch%n", tp, us));
        if (!startup.isEmpty()) {
            System.out.println("start-up of one rank: 64 tensors of 16 GiB virtual (ms)");
            System.out.println("| layout | zero page | create-tensors | destroy-tensors |");
            System.out.println("| --- | --- | --- | --- |");
            for (StartupBenchmark.Row r : startup) {
                System.out.printf("| %s | %s | %s | %.1f |%n", r.layout(), r.zeroPage() ? "yes" : "no",
                        r.failure() == null ? String.format("%.1f", r.createMs())
                                : String.format("failed after %.1f: %s", r.createMs(), r.failure()), r.destroyMs());
            }
        }
        System.exit(tests.getTestsFailedCount() == 0 ? 0 : 1);
    }

    /**
     * Every {@code *Test} class under {@code io/kvpager} in the classpath's jars and folders, read
     * with {@link JarFile} so that a runtime without the zip file system (a small jlinked JRE)
     * can still find them; the tag filter then keeps the GPU ones.
     */
    static List<ClassSelector> testClasses() {
        List<ClassSelector> selectors = new ArrayList<>();
        for (String entry : System.getProperty("java.class.path").split(File.pathSeparator)) {
            Path path = Path.of(entry);
            if (entry.endsWith(".jar") && Files.isRegularFile(path)) {
                try (JarFile jar = new JarFile(path.toFile())) {
                    jar.stream().map(JarEntry::getName).filter(GpuRunner::isTestClass)
                            .forEach(name -> selectors.add(selectClass(className(name))));
                } catch (IOException e) {
                    throw new UncheckedIOException("cannot read " + path, e);
                }
            } else if (Files.isDirectory(path)) {
                try (var files = Files.walk(path)) {
                    files.map(f -> path.relativize(f).toString().replace(File.separatorChar, '/'))
                            .filter(GpuRunner::isTestClass)
                            .forEach(name -> selectors.add(selectClass(className(name))));
                } catch (IOException e) {
                    throw new UncheckedIOException("cannot read " + path, e);
                }
            }
        }
        return selectors;
    }

    private static boolean isTestClass(String name) {
        return name.startsWith("io/kvpager/") && name.endsWith("Test.class") && !name.contains("$");
    }

    private static String className(String entry) {
        return entry.substring(0, entry.length() - ".class".length()).replace('/', '.');
    }

    private static TestExecutionSummary runTests() {
        LauncherDiscoveryRequest request = LauncherDiscoveryRequestBuilder.request()
                .selectors(testClasses())
                .filters(TagFilter.includeTags("gpu"))
                .build();
        Launcher launcher = LauncherFactory.create();
        SummaryGeneratingListener listener = new SummaryGeneratingListener();
        launcher.execute(request, listener);
        return listener.getSummary();
    }
}
