package io.kvpager.cli.demo;

import java.util.List;

/**
 * One panel of the demo's chart: the GPU memory each model held over a run, with the caches' budget
 * and the share a static split would give each model. Drawn as a PNG by {@link MemoryChart} or as an
 * SVG by {@link SvgChart}.
 *
 * @param title the panel's title
 * @param names one per model
 * @param timelines one per model, all sampled at the same instants
 * @param budgetBytes the caches' budget
 * @param shareBytes a static split's share of it per model
 */
record ChartPanel(String title, List<String> names, List<MemoryTimeline> timelines, long budgetBytes, long shareBytes) {

    static final double GIB = 1L << 30;
    /** The size of one panel, in pixels, as either writer draws it. */
    static final int WIDTH = 1000;
    static final int HEIGHT = 560;

    ChartPanel {
        names = List.copyOf(names);
        timelines = List.copyOf(timelines);
        if (names.size() != timelines.size() || timelines.isEmpty()) {
            throw new IllegalArgumentException("one timeline per model is needed, got " + names.size() + " names and "
                    + timelines.size() + " timelines");
        }
        int samples = timelines.getFirst().size();
        for (int m = 1; m < timelines.size(); m++) {
            if (timelines.get(m).size() != samples) {
                throw new IllegalArgumentException("timeline of " + names.get(m) + " has " + timelines.get(m).size()
                        + " samples, the first has " + samples);
            }
        }
    }

    /** The sampling instants, in seconds from the start of the run. */
    double[] seconds() {
        return timelines.getFirst().seconds();
    }

    /** Each model's memory at each sample, in GiB. */
    double[] gib(int model) {
        double[] bytes = timelines.get(model).bytes();
        double[] gib = new double[bytes.length];
        for (int i = 0; i < bytes.length; i++) {
            gib[i] = bytes[i] / GIB;
        }
        return gib;
    }

    /** Every model's memory together at each sample, in GiB. */
    double[] totalGib() {
        double[] total = new double[seconds().length];
        for (int m = 0; m < names.size(); m++) {
            double[] gib = gib(m);
            for (int i = 0; i < gib.length; i++) {
                total[i] += gib[i];
            }
        }
        return total;
    }
}
