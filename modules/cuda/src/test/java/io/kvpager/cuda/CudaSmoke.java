package io.kvpager.cuda;

import static java.lang.foreign.ValueLayout.JAVA_LONG;
import static org.junit.platform.engine.discovery.DiscoverySelectors.selectClass;

import io.kvpager.spi.DeviceFactory;
import io.kvpager.spi.MemoryInfo;
import java.lang.foreign.Arena;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import org.junit.platform.engine.TestExecutionResult;
import org.junit.platform.engine.reporting.ReportEntry;
import org.junit.platform.launcher.EngineFilter;
import org.junit.platform.launcher.LauncherDiscoveryRequest;
import org.junit.platform.launcher.TagFilter;
import org.junit.platform.launcher.TestExecutionListener;
import org.junit.platform.launcher.TestIdentifier;
import org.junit.platform.launcher.core.LauncherDiscoveryRequestBuilder;
import org.junit.platform.launcher.core.LauncherFactory;

/**
 * The cuda module's GPU check in one command, for a machine with a GPU and no build tools: runs
 * the {@code gpu}-tagged tests through the JUnit launcher, then times the raw driver floor beside
 * {@link CudaDevice}, and prints both tables last. Exit status 0 only when every GPU test passed;
 * 2 when there is no GPU (the tests then skip, and say why).
 *
 * <pre>java --enable-native-access=ALL-UNNAMED -cp 'lib/*' io.kvpager.cuda.CudaSmoke [repeats]</pre>
 */
public final class CudaSmoke {

    static final List<Class<?>> GPU_TESTS = List.of(MappingGpuTest.class, LayoutGpuTest.class,
            DriverErrorGpuTest.class, OutOfMemoryGpuTest.class, CloseGpuTest.class);

    private CudaSmoke() {
    }

    public static void main(String[] args) {
        int repeats = args.length > 0 ? Integer.parseInt(args[0]) : 200;
        Optional<String> unavailable = DeviceFactory.forKind("cuda").unavailableReason();
        TestRun tests = runGpuTests();
        List<String> floorTable = unavailable.isEmpty() ? measureFloor(repeats) : List.of();

        System.out.println();
        tests.table().forEach(System.out::println);
        System.out.println();
        if (unavailable.isPresent()) {
            System.out.println("no floor measured: " + unavailable.get());
            System.exit(2);
        }
        floorTable.forEach(System.out::println);
        System.exit(tests.passed() > 0 && tests.failed() == 0 && tests.skipped() == 0 ? 0 : 1);
    }

    private record TestRun(List<String> table, int passed, int failed, int skipped) {
    }

    private static TestRun runGpuTests() {
        List<String> rows = new ArrayList<>();
        Map<String, Long> started = new ConcurrentHashMap<>();
        int[] counts = new int[3]; // passed, failed, skipped (by an assumption or disabled)
        TestExecutionListener table = new TestExecutionListener() {
            @Override
            public void executionStarted(TestIdentifier id) {
                started.put(id.getUniqueId(), System.nanoTime());
            }

            @Override
            public void executionSkipped(TestIdentifier id, String reason) {
                counts[2]++;
                rows.add(String.format("%-8s %7s  %s: %s", "SKIPPED", "", name(id), reason));
            }

            @Override
            public void executionFinished(TestIdentifier id, TestExecutionResult result) {
                Long t0 = started.get(id.getUniqueId());
                long ms = t0 == null ? 0 : (System.nanoTime() - t0) / 1_000_000;
                String cause = result.getThrowable().map(t -> ": " + firstLine(t)).orElse("");
                if (!id.isTest()) {
                    if (result.getStatus() != TestExecutionResult.Status.SUCCESSFUL) {
                        rows.add(String.format("%-8s %7s  %s%s", result.getStatus() == TestExecutionResult.Status.ABORTED
                                ? "SKIPPED" : "FAILED", "", name(id), cause));
                    }
                    return;
                }
                switch (result.getStatus()) {
                    case SUCCESSFUL -> counts[0]++;
                    case FAILED -> counts[1]++;
                    case ABORTED -> counts[2]++;
                }
                String status = switch (result.getStatus()) {
                    case SUCCESSFUL -> "PASSED";
                    case FAILED -> "FAILED";
                    case ABORTED -> "SKIPPED";
                };
                rows.add(String.format("%-8s %5d ms  %s%s", status, ms, name(id), cause));
                result.getThrowable().filter(t -> result.getStatus() == TestExecutionResult.Status.FAILED)
                        .ifPresent(Throwable::printStackTrace);
            }

            @Override
            public void reportingEntryPublished(TestIdentifier id, ReportEntry entry) {
                rows.add("         note      " + name(id) + ": " + entry.getKeyValuePairs());
            }
        };
        LauncherDiscoveryRequest request = LauncherDiscoveryRequestBuilder.request()
                .selectors(GPU_TESTS.stream().map(c -> selectClass(c)).toList())
                .filters(TagFilter.includeTags("gpu"), EngineFilter.includeEngines("junit-jupiter"))
                .build();
        LauncherFactory.create().execute(request, table);
        List<String> out = new ArrayList<>();
        out.add("GPU tests (JUnit, tag gpu)");
        out.addAll(rows);
        out.add(String.format("%d passed, %d failed, %d skipped", counts[0], counts[1], counts[2]));
        return new TestRun(out, counts[0], counts[1], counts[2]);
    }

    private static List<String> measureFloor(int repeats) {
        try (CudaDevice device = Gpu.open("pp0/tp0"); Arena arena = Arena.ofConfined()) {
            long g = device.granularity();
            MemoryInfo before = device.memoryInfo();
            DriverFloor floor = new DriverFloor(device, repeats, arena);
            List<DriverFloor.Row> rows = new ArrayList<>();
            rows.add(floor.create(g));
            rows.add(floor.create(64 * g));
            rows.addAll(List.of(floor.mapAndUnmap(g)));
            rows.addAll(List.of(floor.mapAndUnmap(64 * g)));
            rows.addAll(List.of(floor.perLayerPage(64, g)));
            rows.add(floor.synchronize());
            MemoryInfo after = device.memoryInfo();
            int version = CudaDriver.driverVersion(arena.allocate(JAVA_LONG));
            String title = String.format("driver floor on %s, CUDA %d.%d, granularity %d MiB, median of %d after %d warm-up;"
                    + " free %d MiB before, %d MiB after", device.describe(), version / 1000, version % 1000 / 10, g >> 20,
                    repeats, DriverFloor.WARM_UP, before.freeBytes() >> 20, after.freeBytes() >> 20);
            return DriverFloor.table(title, rows);
        }
    }

    private static String name(TestIdentifier id) {
        String legacy = id.getLegacyReportingName();
        return id.getParentIdObject().map(p -> className(id) + ".").orElse("") + legacy;
    }

    private static String className(TestIdentifier id) {
        return id.getSource().map(Object::toString)
                .map(s -> s.replaceAll(".*className = '(?:[\\w.]*\\.)?(\\w+)'.*", "$1"))
                .orElse("");
    }

    private static String firstLine(Throwable t) {
        String message = String.valueOf(t.getMessage()).strip();
        int nl = message.indexOf('\n');
        return t.getClass().getSimpleName() + " " + (nl < 0 ? message : message.substring(0, nl) + " ...");
    }
}
