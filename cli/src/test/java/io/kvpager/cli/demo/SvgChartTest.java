package io.kvpager.cli.demo;

import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.noClasses;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.within;

import com.tngtech.archunit.core.importer.ClassFileImporter;
import java.io.IOException;
import java.io.StringReader;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;
import javax.xml.parsers.DocumentBuilderFactory;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.w3c.dom.Document;
import org.w3c.dom.Element;
import org.w3c.dom.NodeList;
import org.xml.sax.InputSource;

/** The chart written as text: a well-formed SVG of the same panels, with nothing of Java2D on its path. */
class SvgChartTest {

    @TempDir
    Path dir;

    private static ChartPanel panel(String title) {
        MemoryTimeline a = new MemoryTimeline();
        MemoryTimeline b = new MemoryTimeline();
        for (int i = 0; i <= 30; i++) {
            a.sample(i, (long) i << 30);
            b.sample(i, (long) (30 - i) << 29);
        }
        return new ChartPanel(title, List.of("7b", "70b"), List.of(a, b), 40L << 30, 20L << 30);
    }

    private static Document parse(String svg) throws Exception {
        return DocumentBuilderFactory.newInstance().newDocumentBuilder().parse(new InputSource(new StringReader(svg)));
    }

    @Test
    void writesEveryPanelsLinesTopToBottom() throws Exception {
        Path file = dir.resolve("charts/compare.svg");
        SvgChart.write(file, List.of(panel("static"), panel("arbitrated")));
        Document svg = parse(Files.readString(file));
        Element root = svg.getDocumentElement();
        assertThat(root.getTagName()).isEqualTo("svg");
        assertThat(root.getAttribute("height")).isEqualTo("1120");
        NodeList lines = svg.getElementsByTagName("polyline");
        // per panel: 7b, 70b, all models, the budget, the static share
        assertThat(lines.getLength()).isEqualTo(10);
        Element first = (Element) lines.item(0);
        double[][] points = points(first);
        assertThat(points).hasNumberOfRows(31);
        // 7b rises from 0 GiB at the plot's bottom to 30 GiB; the budget (40 GiB) lies above its last point, the share at half the budget's height
        double[][] budget = points((Element) lines.item(3));
        double[][] share = points((Element) lines.item(4));
        assertThat(points[0][1]).isGreaterThan(points[30][1]);
        assertThat(budget[0][1]).isLessThan(points[30][1]).isEqualTo(budget[1][1]);
        double bottom = points[0][1];
        assertThat(bottom - share[0][1]).isCloseTo((bottom - budget[0][1]) / 2, within(0.11));
        assertThat(Files.readString(file)).contains(">static</text>", ">arbitrated</text>", ">all models</text>", ">caches' budget</text>",
                "stroke-dasharray=\"6 6\"", ">time (s)</text>", ">GPU memory (GiB)</text>");
        assertThat(((Element) lines.item(5)).getParentNode()).isNotSameAs(first.getParentNode());
    }

    @Test
    void textIsEscaped() throws Exception {
        String svg = SvgChart.render(List.of(panel("a <b> & \"c\"")));
        assertThat(parse(svg).getElementsByTagName("text").item(0).getTextContent()).isEqualTo("a <b> & \"c\"");
    }

    @Test
    void ticksAreOneTwoOrFiveTimesAPowerOfTen() {
        assertThat(SvgChart.tickStep(30)).isEqualTo(5);
        assertThat(SvgChart.tickStep(42)).isEqualTo(5);
        assertThat(SvgChart.tickStep(141)).isEqualTo(20);
        assertThat(SvgChart.tickStep(0.5)).isCloseTo(0.1, within(1e-12));
        assertThat(SvgChart.tickStep(0)).isEqualTo(1);
    }

    @Test
    void anSvgIsNamedByItsExtensionAndWrittenBesideAPng() {
        assertThat(SvgChart.isSvg(Path.of("out/chart.SVG"))).isTrue();
        assertThat(SvgChart.isSvg(Path.of("chart.png"))).isFalse();
        assertThat(SvgChart.beside(Path.of("out/kvpager-demo.png"))).isEqualTo(Path.of("out/kvpager-demo.svg"));
        assertThat(SvgChart.beside(Path.of("chart"))).isEqualTo(Path.of("chart.svg"));
    }

    @Test
    void aChartThatCannotBeWrittenLeavesNoFileBehind() throws IOException {
        Path target = Files.createDirectories(dir.resolve("memory.svg"));
        Files.writeString(target.resolve("keep"), "x");
        assertThatThrownBy(() -> SvgChart.write(target, List.of(panel("t")))).isInstanceOf(IOException.class);
        try (var left = Files.list(dir)) {
            assertThat(left).containsExactly(target);
        }
        assertThatThrownBy(() -> SvgChart.render(List.of())).isInstanceOf(IllegalArgumentException.class);
    }

    /** What lets a server without fonts write it: nothing on the SVG's path touches Java2D or the PNG's chart library. */
    @Test
    void theSvgPathNeedsNoJava2d() {
        noClasses().that().haveSimpleName("SvgChart").or().haveSimpleName("ChartPanel").or().haveSimpleName("AtomicFile")
                .should().dependOnClassesThat().resideInAnyPackage("java.awt..", "javax.imageio..", "org.knowm..")
                .check(new ClassFileImporter().importPackages("io.kvpager.cli.demo"));
    }

    private static double[][] points(Element polyline) {
        return Arrays.stream(polyline.getAttribute("points").split(" "))
                .map(p -> Arrays.stream(p.split(",")).mapToDouble(Double::parseDouble).toArray()).toArray(double[][]::new);
    }
}
