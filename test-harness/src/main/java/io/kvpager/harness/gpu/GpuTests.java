package io.kvpager.harness.gpu;

import static org.junit.platform.engine.discovery.DiscoverySelectors.selectClass;

import io.vertx.core.Vertx;
import java.io.File;
import java.io.IOException;
import java.io.PrintWriter;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.jar.JarEntry;
import java.util.jar.JarFile;
import org.junit.platform.engine.discovery.ClassSelector;
import org.junit.platform.launcher.EngineFilter;
import org.junit.platform.launcher.LauncherDiscoveryRequest;
import org.junit.platform.launcher.TagFilter;
import org.junit.platform.launcher.core.LauncherDiscoveryRequestBuilder;
import org.junit.platform.launcher.core.LauncherFactory;
import org.junit.platform.launcher.listeners.SummaryGeneratingListener;
import org.junit.platform.launcher.listeners.TestExecutionSummary;

/**
 * The GPU test suite: every JUnit Jupiter test tagged {@code gpu} among the given classes (by
 * default every {@code *Test} class of kvpager on the classpath). Other engines (jqwik's property
 * tests) are not run: none of their tests is a GPU test. A failed test fails the run, and so does
 * a failure outside any test (an engine, a class's set-up), which the summary counts apart, and
 * finding no GPU test at all.
 */
final class GpuTests implements GpuSection {

    static final String ENGINE = "junit-jupiter";

    private final List<ClassSelector> classes;
    private final String tag;

    /** Every kvpager test class on the classpath, tag {@code gpu}. */
    GpuTests() {
        this(testClasses(), "gpu");
    }

    GpuTests(List<ClassSelector> classes, String tag) {
        this.classes = List.copyOf(classes);
        this.tag = tag;
    }

    @Override
    public String name() {
        return "tests";
    }

    @Override
    public Report run(Vertx vertx, boolean quick) {
        System.out.println("== GPU tests (JUnit Jupiter, tag " + tag + ")");
        LauncherDiscoveryRequest request = LauncherDiscoveryRequestBuilder.request()
                .selectors(classes)
                .filters(EngineFilter.includeEngines(ENGINE), TagFilter.includeTags(tag))
                .build();
        SummaryGeneratingListener listener = new SummaryGeneratingListener();
        LauncherFactory.create().execute(request, listener);
        TestExecutionSummary summary = listener.getSummary();
        summary.printFailuresTo(new PrintWriter(System.out, true), 20);
        return report(summary);
    }

    static Report report(TestExecutionSummary s) {
        List<String> lines = new ArrayList<>();
        lines.add(String.format("GPU tests: %d passed, %d failed, %d skipped or aborted", s.getTestsSucceededCount(),
                s.getTestsFailedCount(), s.getTestsSkippedCount() + s.getTestsAbortedCount()));
        if (s.getContainersFailedCount() > 0) {
            lines.add(String.format("  and %d failures outside any test (an engine or a class's set-up):",
                    s.getContainersFailedCount()));
            for (TestExecutionSummary.Failure f : s.getFailures()) {
                if (!f.getTestIdentifier().isTest()) {
                    lines.add("    " + f.getTestIdentifier().getDisplayName() + ": " + f.getException());
                }
            }
        }
        boolean none = s.getTestsFoundCount() == 0;
        if (none) {
            lines.add("  no GPU test was found: the classpath lacks the test classes");
        }
        return new Report(lines, none || s.getTotalFailureCount() > 0);
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
                    jar.stream().map(JarEntry::getName).filter(GpuTests::isTestClass)
                            .forEach(name -> selectors.add(selectClass(className(name))));
                } catch (IOException e) {
                    throw new UncheckedIOException("cannot read " + path, e);
                }
            } else if (Files.isDirectory(path)) {
                try (var files = Files.walk(path)) {
                    files.map(f -> path.relativize(f).toString().replace(File.separatorChar, '/'))
                            .filter(GpuTests::isTestClass)
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
}
