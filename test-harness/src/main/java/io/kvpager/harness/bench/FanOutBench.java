package io.kvpager.harness.bench;

import org.openjdk.jmh.results.RunResult;
import org.openjdk.jmh.runner.Runner;
import org.openjdk.jmh.runner.RunnerException;
import org.openjdk.jmh.runner.options.CommandLineOptionException;
import org.openjdk.jmh.runner.options.CommandLineOptions;
import org.openjdk.jmh.runner.options.OptionsBuilder;

import java.util.Collection;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;

/**
 * Runs {@link FanOutBenchmark} and prints, for each TP and batch size, the fan-out's median beside
 * its floor's and their ratio. Arguments are JMH's own ({@code -wi 2 -i 3 -w 1s -r 1s -p tp=4}).
 * See {@code test-harness/run-bench}.
 */
public final class FanOutBench {

    private FanOutBench() {
    }

    public static void main(String[] args) throws RunnerException, CommandLineOptionException {
        Collection<RunResult> results = new Runner(new OptionsBuilder().parent(new CommandLineOptions(args))
                .include(FanOutBenchmark.class.getName()).build()).run();
        // (tp, pages) -> [fanOut, floor]: medians in µs per alloc + free + trim
        Map<String, double[]> rows = new TreeMap<>();
        for (RunResult r : results) {
            var params = r.getParams();
            String key = String.format(Locale.ROOT, "%s|%03d|%d", params.getParam("layout"), Integer.parseInt(params.getParam("pages")),
                    Integer.parseInt(params.getParam("tp")));
            double score = r.getPrimaryResult().getStatistics().getPercentile(50);
            rows.computeIfAbsent(key, k -> new double[] {Double.NaN, Double.NaN})[params.getBenchmark().endsWith(".fanOut") ? 0 : 1] = score;
        }
        System.out.println();
        System.out.println("| layout | page ids per batch | TP | fan-out µs/op (p50) | floor µs/op (p50) | fan-out / floor | fan-out µs per page id per rank |");
        System.out.println("| --- | ---: | ---: | ---: | ---: | ---: | ---: |");
        rows.forEach((key, v) -> {
            String[] k = key.split("\\|");
            int pages = Integer.parseInt(k[1]);
            int tp = Integer.parseInt(k[2]);
            System.out.printf(Locale.ROOT, "| %s | %d | %d | %.1f | %.1f | %.2f | %.2f |%n", k[0], pages, tp, v[0], v[1], v[0] / v[1],
                    v[0] / pages / tp);
        });
    }
}
