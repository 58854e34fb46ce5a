package io.kvpager.cli.demo;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import javax.imageio.ImageIO;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class MemoryChartTest {

    @TempDir
    Path dir;

    @Test
    void writesAPngOfEveryModel() throws IOException {
        MemoryTimeline a = new MemoryTimeline();
        MemoryTimeline b = new MemoryTimeline();
        for (int i = 0; i <= 20; i++) {
            a.sample(i, (long) i << 30);
            b.sample(i, (long) (20 - i) << 30);
        }
        Path file = dir.resolve("charts/memory.png");
        MemoryChart.write(file, List.of(new ChartPanel("test", List.of("7b", "70b"), List.of(a, b), 141L << 30, 47L << 30)));
        assertThat(file).isNotEmptyFile();
        // the permissions of any file written there, not a temporary file's owner-only ones
        Path plain = Files.createFile(file.resolveSibling("plain"));
        assertThat(Files.getPosixFilePermissions(file)).isEqualTo(Files.getPosixFilePermissions(plain));
        var image = ImageIO.read(file.toFile());
        assertThat(image.getWidth()).isEqualTo(1000);
        assertThat(image.getHeight()).isEqualTo(560);
    }

    @Test
    void refusesTimelinesOfDifferentLengths() {
        MemoryTimeline a = new MemoryTimeline();
        MemoryTimeline b = new MemoryTimeline();
        a.sample(0, 1);
        assertThatThrownBy(() -> MemoryChart.write(dir.resolve("x.png"), List.of(new ChartPanel("t", List.of("a", "b"), List.of(a, b), 10, 5))))
                .isInstanceOf(IllegalArgumentException.class);
        assertThat(Files.exists(dir.resolve("x.png"))).isFalse();
    }

    @Test
    void aChartThatCannotBeWrittenLeavesNoFileBehind() throws IOException {
        MemoryTimeline a = new MemoryTimeline();
        a.sample(0, 1L << 30);
        a.sample(1, 2L << 30);
        // the target is a folder with a file in it: the chart is drawn, but cannot take its place
        Path target = dir.resolve("memory.png");
        Files.createDirectories(target);
        Files.writeString(target.resolve("keep"), "x");
        assertThatThrownBy(() -> MemoryChart.write(target, List.of(new ChartPanel("t", List.of("a"), List.of(a), 10L << 30, 5L << 30))))
                .isInstanceOf(IOException.class);
        try (var left = Files.list(dir)) {
            assertThat(left).containsExactly(target);
        }
        assertThat(target.resolve("keep")).hasContent("x");
    }
}
