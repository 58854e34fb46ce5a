package io.kvpager.cli.demo;

import java.nio.file.Path;
import java.util.List;

/**
 * The outcome of a demo run.
 *
 * @param settings what was run
 * @param models one report per model, in the order of the settings
 * @param chart the memory chart written
 * @param violations the run's own invariants that did not hold; empty for a good run
 */
public record DemoReport(DemoSettings settings, List<ModelReport> models, Path chart, List<String> violations) {

    public DemoReport {
        models = List.copyOf(models);
        violations = List.copyOf(violations);
    }

    public boolean ok() {
        return violations.isEmpty();
    }
}
