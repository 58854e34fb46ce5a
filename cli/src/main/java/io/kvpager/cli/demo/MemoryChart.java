package io.kvpager.cli.demo;

import java.awt.BasicStroke;
import java.awt.Color;
import java.awt.Graphics2D;
import java.awt.image.BufferedImage;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.List;
import javax.imageio.ImageIO;
import org.knowm.xchart.BitmapEncoder;
import org.knowm.xchart.XYChart;
import org.knowm.xchart.XYChartBuilder;
import org.knowm.xchart.XYSeries;
import org.knowm.xchart.style.markers.SeriesMarkers;

/**
 * The demo's picture: GPU memory held by each model over the run, their sum, the GPU's capacity
 * and the share a static split would give each model. Drawn off-screen and written as a PNG; the
 * runs of {@code --compare} as one picture, a panel per policy.
 */
final class MemoryChart {

    private static final double GIB = 1L << 30;
    private static final int WIDTH = 1000;
    private static final int HEIGHT = 560;

    private MemoryChart() {
    }

    /**
     * Writes the chart to {@code file} (parent folders are created).
     *
     * @param names one per model
     * @param timelines one per model, all sampled at the same instants
     */
    static void write(Path file, String title, List<String> names, List<MemoryTimeline> timelines, long gpuBytes, long shareBytes)
            throws IOException {
        writePng(file, BitmapEncoder.getBufferedImage(chart(title, names, timelines, gpuBytes, shareBytes)));
    }

    /** Writes one picture of several charts, one panel per chart, top to bottom. */
    static void writePanels(Path file, List<XYChart> charts) throws IOException {
        if (charts.isEmpty()) {
            throw new IllegalArgumentException("no chart to draw");
        }
        BufferedImage image = new BufferedImage(WIDTH, HEIGHT * charts.size(), BufferedImage.TYPE_INT_RGB);
        Graphics2D g = image.createGraphics();
        try {
            for (int i = 0; i < charts.size(); i++) {
                g.drawImage(BitmapEncoder.getBufferedImage(charts.get(i)), 0, i * HEIGHT, null);
            }
        } finally {
            g.dispose();
        }
        writePng(file, image);
    }

    /**
     * Writes {@code image} beside {@code file} and moves it over the file: a write that fails leaves no
     * empty or partial PNG behind. The image is drawn before this, so a machine that cannot draw (no
     * fonts) never creates the file at all.
     */
    private static void writePng(Path file, BufferedImage image) throws IOException {
        Path parent = file.toAbsolutePath().getParent();
        if (parent != null) {
            Files.createDirectories(parent);
        }
        // a name of this process's own beside the file, created with the file's usual permissions (a temporary file's are 0600)
        Path partial = file.resolveSibling("." + file.getFileName() + "." + ProcessHandle.current().pid() + "-" + System.nanoTime()
                + ".part");
        try {
            try (OutputStream out = Files.newOutputStream(partial)) {
                if (!ImageIO.write(image, "png", out)) {
                    throw new IOException("no PNG writer in this Java runtime");
                }
            }
            Files.move(partial, file, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
        } finally {
            Files.deleteIfExists(partial);
        }
    }

    /** The chart of one run. */
    static XYChart chart(String title, List<String> names, List<MemoryTimeline> timelines, long gpuBytes, long shareBytes) {
        if (names.size() != timelines.size() || timelines.isEmpty()) {
            throw new IllegalArgumentException("one timeline per model is needed, got " + names.size() + " names and "
                    + timelines.size() + " timelines");
        }
        // No display is needed or wanted: this runs on servers and in CI.
        System.setProperty("java.awt.headless", "true");
        XYChart chart = new XYChartBuilder().width(WIDTH).height(HEIGHT).title(title)
                .xAxisTitle("time (s)").yAxisTitle("GPU memory (GiB)").build();
        chart.getStyler().setDefaultSeriesRenderStyle(XYSeries.XYSeriesRenderStyle.Line);
        chart.getStyler().setMarkerSize(0);
        chart.getStyler().setYAxisMin(0.0);
        chart.getStyler().setChartBackgroundColor(Color.WHITE);

        double[] seconds = timelines.getFirst().seconds();
        double[] total = new double[seconds.length];
        for (int m = 0; m < names.size(); m++) {
            double[] bytes = timelines.get(m).bytes();
            if (bytes.length != seconds.length) {
                throw new IllegalArgumentException("timeline of " + names.get(m) + " has " + bytes.length
                        + " samples, the first has " + seconds.length);
            }
            double[] gib = new double[bytes.length];
            for (int i = 0; i < bytes.length; i++) {
                gib[i] = bytes[i] / GIB;
                total[i] += gib[i];
            }
            chart.addSeries(names.get(m), seconds, gib).setMarker(SeriesMarkers.NONE);
        }
        if (names.size() > 1) {
            chart.addSeries("all models", seconds, total).setMarker(SeriesMarkers.NONE).setLineColor(Color.DARK_GRAY);
        }
        double[] span = {seconds.length == 0 ? 0 : seconds[0], seconds.length == 0 ? 1 : seconds[seconds.length - 1]};
        chart.addSeries("caches' budget", span, new double[] {gpuBytes / GIB, gpuBytes / GIB})
                .setMarker(SeriesMarkers.NONE).setLineColor(Color.BLACK);
        chart.addSeries("static split share", span, new double[] {shareBytes / GIB, shareBytes / GIB})
                .setMarker(SeriesMarkers.NONE).setLineColor(Color.GRAY)
                .setLineStyle(new BasicStroke(1.5f, BasicStroke.CAP_BUTT, BasicStroke.JOIN_MITER, 10f, new float[] {6f, 6f}, 0f));
        return chart;
    }
}
