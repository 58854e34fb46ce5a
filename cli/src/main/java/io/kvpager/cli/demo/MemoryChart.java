package io.kvpager.cli.demo;

import java.awt.BasicStroke;
import java.awt.Color;
import java.awt.Graphics2D;
import java.awt.image.BufferedImage;
import java.io.IOException;
import java.nio.file.Path;
import java.util.List;
import javax.imageio.ImageIO;
import org.knowm.xchart.BitmapEncoder;
import org.knowm.xchart.XYChart;
import org.knowm.xchart.XYChartBuilder;
import org.knowm.xchart.XYSeries;
import org.knowm.xchart.style.markers.SeriesMarkers;

/**
 * The demo's picture: GPU memory held by each model over the run, their sum, the GPU's capacity
 * and the share a static split would give each model. Drawn off-screen with Java2D and written as a
 * PNG; the runs of {@code --compare} as one picture, a panel per policy. Java2D needs fonts to draw
 * text: on a machine without, {@link SvgChart} writes the same panels as text.
 */
final class MemoryChart {

    private static final double GIB = ChartPanel.GIB;
    private static final int WIDTH = ChartPanel.WIDTH;
    private static final int HEIGHT = ChartPanel.HEIGHT;

    private MemoryChart() {
    }

    /**
     * Writes the panels to {@code file} as one PNG, top to bottom (parent folders are created). The
     * image is drawn before the file is written, so a machine that cannot draw (no fonts) never
     * creates the file at all; a write that fails leaves no empty or partial PNG behind.
     */
    static void write(Path file, List<ChartPanel> panels) throws IOException {
        if (panels.isEmpty()) {
            throw new IllegalArgumentException("no chart to draw");
        }
        BufferedImage image = new BufferedImage(WIDTH, HEIGHT * panels.size(), BufferedImage.TYPE_INT_RGB);
        Graphics2D g = image.createGraphics();
        try {
            for (int i = 0; i < panels.size(); i++) {
                g.drawImage(BitmapEncoder.getBufferedImage(chart(panels.get(i))), 0, i * HEIGHT, null);
            }
        } finally {
            g.dispose();
        }
        AtomicFile.write(file, out -> {
            if (!ImageIO.write(image, "png", out)) {
                throw new IOException("no PNG writer in this Java runtime");
            }
        });
    }

    /** The chart of one run. */
    static XYChart chart(ChartPanel panel) {
        // No display is needed or wanted: this runs on servers and in CI.
        System.setProperty("java.awt.headless", "true");
        XYChart chart = new XYChartBuilder().width(WIDTH).height(HEIGHT).title(panel.title())
                .xAxisTitle("time (s)").yAxisTitle("GPU memory (GiB)").build();
        chart.getStyler().setDefaultSeriesRenderStyle(XYSeries.XYSeriesRenderStyle.Line);
        chart.getStyler().setMarkerSize(0);
        chart.getStyler().setYAxisMin(0.0);
        chart.getStyler().setChartBackgroundColor(Color.WHITE);

        double[] seconds = panel.seconds();
        for (int m = 0; m < panel.names().size(); m++) {
            chart.addSeries(panel.names().get(m), seconds, panel.gib(m)).setMarker(SeriesMarkers.NONE);
        }
        if (panel.names().size() > 1) {
            chart.addSeries("all models", seconds, panel.totalGib()).setMarker(SeriesMarkers.NONE).setLineColor(Color.DARK_GRAY);
        }
        double[] span = {seconds.length == 0 ? 0 : seconds[0], seconds.length == 0 ? 1 : seconds[seconds.length - 1]};
        chart.addSeries("caches' budget", span, new double[] {panel.budgetBytes() / GIB, panel.budgetBytes() / GIB})
                .setMarker(SeriesMarkers.NONE).setLineColor(Color.BLACK);
        chart.addSeries("static split share", span, new double[] {panel.shareBytes() / GIB, panel.shareBytes() / GIB})
                .setMarker(SeriesMarkers.NONE).setLineColor(Color.GRAY)
                .setLineStyle(new BasicStroke(1.5f, BasicStroke.CAP_BUTT, BasicStroke.JOIN_MITER, 10f, new float[] {6f, 6f}, 0f));
        return chart;
    }
}
