package io.kvpager.cli.demo;

import io.kvpager.cli.text.TextTable;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * Where each policy's tail of time to first token comes from, in {@code kvpager demo --compare}:
 * per model and policy, the request at that policy's p99 (the one the comparison's {@code TTFT p99}
 * is), what the same request of the trace waited under every policy, and how many requests of each
 * model had arrived without a first token when it arrived, under that policy.
 *
 * <p>A tail whose request waited about as long under every policy, and arrived while several models
 * had requests waiting, comes from bursts meeting: memory was short for all of them, and a policy
 * can only move the wait from one model to another. A tail only one policy has is that policy's.
 */
final class WorstWaits {

    private WorstWaits() {
    }

    /**
     * One policy's run, its models' requests in the order of {@code models}.
     *
     * @param policy the policy's name
     * @param byModel per model, its requests
     */
    record Run(String policy, List<List<ModelReport.Request>> byModel) {

        Run {
            byModel = byModel.stream().map(List::copyOf).toList();
        }
    }

    /** The section for the reports of one comparison: the same models, in the same order, in each. */
    static String render(List<DemoReport> reports) {
        List<String> models = reports.getFirst().models().stream().map(m -> m.model().name()).toList();
        List<Run> runs = reports.stream()
                .map(r -> new Run(r.policy().flag(), r.models().stream().map(ModelReport::requests).toList()))
                .toList();
        return render(models, runs);
    }

    static String render(List<String> models, List<Run> runs) {
        if (runs.isEmpty()) {
            throw new IllegalArgumentException("nothing to compare");
        }
        for (Run run : runs) {
            if (run.byModel().size() != models.size()) {
                throw new IllegalArgumentException("the run of " + run.policy() + " has " + run.byModel().size() + " models, not the "
                        + models.size() + " of " + models);
            }
        }
        List<String> header = new ArrayList<>(List.of("model", "p99 of", "request", "arrived s", "prompt"));
        runs.forEach(run -> header.add(run.policy() + " ms"));
        models.forEach(model -> header.add("waiting " + model));
        TextTable table = new TextTable(header.toArray(String[]::new));
        for (int m = 0; m < models.size(); m++) {
            List<Map<Integer, ModelReport.Request>> byId = new ArrayList<>();
            for (Run run : runs) {
                Map<Integer, ModelReport.Request> ids = new HashMap<>();
                run.byModel().get(m).forEach(r -> ids.put(r.id(), r));
                byId.add(ids);
            }
            for (Run run : runs) {
                ModelReport.Request worst = atP99(run.byModel().get(m));
                if (worst == null) {
                    continue;
                }
                List<Object> row = new ArrayList<>(List.of(models.get(m), run.policy(), "#" + worst.id(),
                        String.format(Locale.ROOT, "%.1f", worst.arrivalMs() / 1000.0), String.format(Locale.ROOT, "%,d", worst.promptTokens())));
                for (Map<Integer, ModelReport.Request> ids : byId) {
                    ModelReport.Request same = ids.get(worst.id());
                    row.add(same == null ? "-" : same.ttftMs() < 0 ? "none" : same.ttftMs());
                }
                for (List<ModelReport.Request> requests : run.byModel()) {
                    row.add(requests.stream().filter(r -> r.waitingAt(worst.arrivalMs())).count());
                }
                table.row(row.toArray());
            }
        }
        return "worst waits: per model, the request at each policy's TTFT p99, what it waited for its first token under every policy"
                + " (none: it got none), and the requests of each model that had arrived without a first token when it arrived, under that policy:\n"
                + table.render();
    }

    /**
     * The request whose time to first token is the nearest-rank 99th percentile of those that got
     * one (the comparison's {@code TTFT p99}), equal times in arrival order. Null when none got one.
     */
    static ModelReport.Request atP99(List<ModelReport.Request> requests) {
        List<ModelReport.Request> served = new ArrayList<>(requests.stream().filter(r -> r.ttftMs() >= 0).toList());
        if (served.isEmpty()) {
            return null;
        }
        served.sort(Comparator.comparingLong(ModelReport.Request::ttftMs).thenComparingLong(ModelReport.Request::arrivalMs)
                .thenComparingInt(ModelReport.Request::id));
        return served.get(LatencyRecorder.nearestRank(99, served.size()));
    }
}
