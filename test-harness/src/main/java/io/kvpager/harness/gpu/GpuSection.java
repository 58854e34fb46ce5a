package io.kvpager.harness.gpu;

import io.vertx.core.Vertx;
import java.util.List;

/**
 * One part of a GPU run: a check or a benchmark. {@link GpuRunner} runs its sections in the order
 * of {@link GpuRunner#sections()}, each with the run's Vert.x, and prints every section's report
 * last, in the same order. A new benchmark is a class that implements this and one line in that
 * list.
 */
public interface GpuSection {

    /** The name {@code --sections} selects it by: lower case, no spaces. */
    String name();

    /**
     * Runs the section on GPU 0. Progress goes to standard output as it happens; the answer is
     * what the final report shows. A section that throws fails the run, and the runner goes on
     * with the next one.
     *
     * @param quick a short form of the run, for a first look
     */
    Report run(Vertx vertx, boolean quick);

    /**
     * What a section leaves for the final report.
     *
     * @param lines printed as they are (e.g. a markdown table)
     * @param failed whether the run must exit non-zero for it
     */
    record Report(List<String> lines, boolean failed) {
        public Report {
            lines = List.copyOf(lines);
        }
    }
}
