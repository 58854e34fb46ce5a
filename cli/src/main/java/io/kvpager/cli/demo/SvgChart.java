package io.kvpager.cli.demo;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.List;
import java.util.Locale;

/**
 * The demo's chart as an SVG, written as text: no fonts and no {@code java.desktop} are needed to
 * write it (the viewer draws its text), so a server without either gets its chart too. The same
 * panels as the PNG: each model's memory over the run, all models together, the caches' budget and
 * the static split's share (dashed), a panel per policy, top to bottom.
 */
final class SvgChart {

    private static final int WIDTH = ChartPanel.WIDTH;
    private static final int HEIGHT = ChartPanel.HEIGHT;
    private static final int LEFT = 70;
    private static final int RIGHT = WIDTH - 180;
    private static final int TOP = 44;
    private static final int BOTTOM = HEIGHT - 56;
    private static final String[] COLORS = {"#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#17becf"};

    private SvgChart() {
    }

    /** Whether {@code file} names an SVG, by its extension. */
    static boolean isSvg(Path file) {
        return file.getFileName() != null && file.getFileName().toString().toLowerCase(Locale.ROOT).endsWith(".svg");
    }

    /** The SVG beside {@code file}: its name with the extension replaced by {@code .svg}. */
    static Path beside(Path file) {
        String name = file.getFileName().toString();
        int dot = name.lastIndexOf('.');
        return file.resolveSibling((dot > 0 ? name.substring(0, dot) : name) + ".svg");
    }

    /** Writes the panels to {@code file}, top to bottom (parent folders are created; a failed write leaves no file). */
    static void write(Path file, List<ChartPanel> panels) throws IOException {
        byte[] svg = render(panels).getBytes(StandardCharsets.UTF_8);
        AtomicFile.write(file, out -> out.write(svg));
    }

    /** The SVG document of the panels. */
    static String render(List<ChartPanel> panels) {
        if (panels.isEmpty()) {
            throw new IllegalArgumentException("no chart to draw");
        }
        StringBuilder svg = new StringBuilder();
        svg.append(String.format(Locale.ROOT, "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" viewBox=\"0 0 %d %d\" "
                + "font-family=\"sans-serif\" font-size=\"12\">%n", WIDTH, HEIGHT * panels.size(), WIDTH, HEIGHT * panels.size()));
        svg.append("<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n");
        for (int p = 0; p < panels.size(); p++) {
            svg.append(String.format(Locale.ROOT, "<g transform=\"translate(0 %d)\">%n", p * HEIGHT));
            panel(svg, panels.get(p));
            svg.append("</g>\n");
        }
        return svg.append("</svg>\n").toString();
    }

    private static void panel(StringBuilder svg, ChartPanel panel) {
        double[] seconds = panel.seconds();
        double[] total = panel.totalGib();
        double budget = panel.budgetBytes() / ChartPanel.GIB;
        double share = panel.shareBytes() / ChartPanel.GIB;
        double x0 = seconds.length == 0 ? 0 : seconds[0];
        double x1 = seconds.length == 0 ? 1 : Math.max(seconds[seconds.length - 1], x0 + 1e-9);
        double yMax = budget;
        for (double t : total) {
            yMax = Math.max(yMax, t);
        }
        double yStep = tickStep(yMax * 1.05);
        double yTop = Math.max(yStep, Math.ceil(yMax * 1.05 / yStep) * yStep);
        Scale scale = new Scale(x0, x1, yTop);

        svg.append(String.format(Locale.ROOT, "<text x=\"%d\" y=\"26\" text-anchor=\"middle\" font-size=\"16\">%s</text>%n",
                (LEFT + RIGHT) / 2, escape(panel.title())));
        for (double y = 0; y <= yTop + yStep / 2; y += yStep) {
            svg.append(String.format(Locale.ROOT, "<line x1=\"%d\" y1=\"%.1f\" x2=\"%d\" y2=\"%.1f\" stroke=\"#e0e0e0\"/>"
                    + "<text x=\"%d\" y=\"%.1f\" text-anchor=\"end\">%s</text>%n", LEFT, scale.y(y), RIGHT, scale.y(y), LEFT - 6, scale.y(y) + 4,
                    number(y)));
        }
        double xStep = tickStep(x1 - x0);
        for (double x = Math.ceil(x0 / xStep) * xStep; x <= x1 + xStep / 1e6; x += xStep) {
            svg.append(String.format(Locale.ROOT, "<line x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" y2=\"%d\" stroke=\"#e0e0e0\"/>"
                    + "<text x=\"%.1f\" y=\"%d\" text-anchor=\"middle\">%s</text>%n", scale.x(x), TOP, scale.x(x), BOTTOM, scale.x(x), BOTTOM + 18,
                    number(x)));
        }
        svg.append(String.format(Locale.ROOT, "<rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" fill=\"none\" stroke=\"#808080\"/>%n", LEFT, TOP,
                RIGHT - LEFT, BOTTOM - TOP));
        svg.append(String.format(Locale.ROOT, "<text x=\"%d\" y=\"%d\" text-anchor=\"middle\">time (s)</text>%n", (LEFT + RIGHT) / 2, BOTTOM + 40));
        svg.append(String.format(Locale.ROOT, "<text transform=\"translate(20 %d) rotate(-90)\" text-anchor=\"middle\">GPU memory (GiB)</text>%n",
                (TOP + BOTTOM) / 2));

        int legend = 0;
        for (int m = 0; m < panel.names().size(); m++) {
            series(svg, scale, seconds, panel.gib(m), COLORS[m % COLORS.length], "", panel.names().get(m), legend++);
        }
        if (panel.names().size() > 1) {
            series(svg, scale, seconds, total, "#404040", "", "all models", legend++);
        }
        double[] span = {x0, x1};
        series(svg, scale, span, new double[] {budget, budget}, "#000000", "", "caches' budget", legend++);
        series(svg, scale, span, new double[] {share, share}, "#808080", " stroke-dasharray=\"6 6\"", "static split share", legend);
    }

    /** One line and its legend entry. */
    private static void series(StringBuilder svg, Scale scale, double[] xs, double[] ys, String color, String dash, String name, int legendRow) {
        svg.append("<polyline fill=\"none\" stroke=\"").append(color).append("\" stroke-width=\"1.5\"").append(dash).append(" points=\"");
        for (int i = 0; i < xs.length; i++) {
            svg.append(String.format(Locale.ROOT, i == 0 ? "%.1f,%.1f" : " %.1f,%.1f", scale.x(xs[i]), scale.y(ys[i])));
        }
        svg.append("\"><title>").append(escape(name)).append("</title></polyline>\n");
        int y = TOP + 10 + legendRow * 20;
        svg.append(String.format(Locale.ROOT, "<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" stroke=\"%s\" stroke-width=\"2\"%s/>"
                + "<text x=\"%d\" y=\"%d\">%s</text>%n", RIGHT + 14, y, RIGHT + 44, y, color, dash, RIGHT + 50, y + 4, escape(name)));
    }

    /** Data to the plot area's pixels. */
    private record Scale(double x0, double x1, double yTop) {

        double x(double seconds) {
            return LEFT + (seconds - x0) / (x1 - x0) * (RIGHT - LEFT);
        }

        double y(double gib) {
            return BOTTOM - gib / yTop * (BOTTOM - TOP);
        }
    }

    /** A step of 1, 2 or 5 times a power of ten that cuts {@code span} into 4 to 10 ticks. */
    static double tickStep(double span) {
        if (!(span > 0) || Double.isInfinite(span)) {
            return 1;
        }
        double power = Math.pow(10, Math.floor(Math.log10(span / 5)));
        for (double factor : new double[] {1, 2, 5}) {
            if (span / (factor * power) <= 10) {
                return factor * power;
            }
        }
        return 10 * power;
    }

    private static String number(double value) {
        double rounded = Math.round(value * 1000) / 1000.0;
        return rounded == Math.rint(rounded) ? String.format(Locale.ROOT, "%d", (long) rounded) : String.format(Locale.ROOT, "%s", rounded);
    }

    static String escape(String text) {
        return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;").replace("\"", "&quot;");
    }
}
