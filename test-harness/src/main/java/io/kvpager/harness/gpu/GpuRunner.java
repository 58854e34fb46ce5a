package io.kvpager.harness.gpu;

import io.kvpager.spi.DeviceFactory;
import io.vertx.core.Vertx;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Optional;
import java.util.Set;

/**
 * Everything kvpager checks on a real GPU, in one call: its {@link #sections()} in order (the GPU
 * test suite, the map path, the demo's shape, decode attention, the start-up), each section's
 * report printed last.
 * Exits 1 when a section failed (a GPU test, an engine, or a benchmark that threw), 2 for bad
 * arguments or no CUDA device.
 *
 * <p>Arguments: {@code [--quick] [--sections NAME,...]}. {@code --quick} runs short forms (TP=1,
 * batches of 1 and 16, no start-up); {@code --sections} runs only the sections named, in the
 * order of the list.
 */
public final class GpuRunner {

    private GpuRunner() {
    }

    /** Every section, in the order they run. A new GPU benchmark is one more line here. */
    static List<GpuSection> sections() {
        return List.of(
                new GpuTests(),
                new MapPathBenchmark(),
                new DemoShapeBenchmark(),
                new AttentionSection(),
                new StartupBenchmark());
    }

    public static void main(String[] args) {
        List<GpuSection> chosen;
        boolean quick;
        try {
            quick = List.of(args).contains("--quick");
            chosen = choose(args);
        } catch (IllegalArgumentException e) {
            System.err.println("kvpager GPU runner: " + e.getMessage());
            System.exit(2);
            return;
        }
        Optional<String> unavailable = DeviceFactory.forKind("cuda").unavailableReason();
        if (unavailable.isPresent()) {
            System.err.println("kvpager GPU runner: no CUDA device: " + unavailable.get());
            System.exit(2);
        }
        List<String> report = new ArrayList<>();
        boolean failed = false;
        Vertx vertx = Vertx.vertx();
        try {
            for (GpuSection section : chosen) {
                GpuSection.Report result;
                try {
                    result = section.run(vertx, quick);
                } catch (RuntimeException e) {
                    e.printStackTrace(System.out);
                    result = new GpuSection.Report(List.of("section " + section.name() + " FAILED: " + e), true);
                }
                failed |= result.failed();
                report.addAll(result.lines());
            }
        } finally {
            Await.of(vertx.close());
        }
        System.out.println();
        report.forEach(System.out::println);
        System.out.println(failed ? "GPU run FAILED" : "GPU run passed");
        System.exit(failed ? 1 : 0);
    }

    /**
     * The sections the arguments ask for.
     *
     * @throws IllegalArgumentException for an unknown argument or section name
     */
    static List<GpuSection> choose(String[] args) {
        Set<String> names = null;
        for (int i = 0; i < args.length; i++) {
            switch (args[i]) {
                case "--quick" -> {
                }
                case "--sections" -> {
                    if (i + 1 == args.length) {
                        throw new IllegalArgumentException("--sections needs a list of names, e.g. --sections tests,map");
                    }
                    names = new LinkedHashSet<>(List.of(args[++i].split(",")));
                }
                default -> throw new IllegalArgumentException("unknown argument '" + args[i]
                        + "'; usage: GpuRunner [--quick] [--sections NAME,...]");
            }
        }
        List<GpuSection> all = sections();
        if (names == null) {
            return all;
        }
        List<String> known = all.stream().map(GpuSection::name).toList();
        for (String name : names) {
            if (!known.contains(name)) {
                throw new IllegalArgumentException("no section '" + name + "'; sections: " + String.join(", ", known));
            }
        }
        Set<String> wanted = names;
        return all.stream().filter(s -> wanted.contains(s.name())).toList();
    }
}
