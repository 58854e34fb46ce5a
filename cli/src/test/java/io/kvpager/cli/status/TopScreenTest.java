package io.kvpager.cli.status;

import static org.assertj.core.api.Assertions.assertThat;

import io.vertx.core.Future;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.LocalTime;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import org.jline.terminal.Terminal;
import org.jline.terminal.TerminalBuilder;
import org.junit.jupiter.api.Test;

class TopScreenTest {

    private static final List<InstanceStatus> TWO = List.of(InstanceStatus.of(StatusFixtures.healthy()),
            InstanceStatus.of(StatusFixtures.oneRankDown()));

    @Test
    void aFrameIsAHeaderThenTheStatusTable() {
        List<String> frame = TopScreen.frame(TWO, LocalTime.of(12, 34, 56), Duration.ofSeconds(1), 200, 50);
        assertThat(frame.getFirst()).isEqualTo("kvpager top  12:34:56  2 instances, 1 healthy  every 1000 ms  (q quits)");
        assertThat(frame.get(1)).isEmpty();
        assertThat(String.join("\n", frame)).isEqualTo("kvpager top  12:34:56  2 instances, 1 healthy  every 1000 ms  (q quits)\n\n"
                + StatusTable.render(TWO).stripTrailing());
    }

    @Test
    void aFrameFitsTheTerminal() {
        List<String> frame = TopScreen.frame(TWO, LocalTime.NOON, Duration.ofSeconds(1), 40, 5);
        assertThat(frame).hasSize(5).allSatisfy(line -> assertThat(line.length()).isLessThanOrEqualTo(40));
    }

    @Test
    void redrawsUntilQIsPressed() throws Exception {
        ByteArrayOutputStream screen = new ByteArrayOutputStream();
        // 'q' arrives after the first frame has been drawn.
        ByteArrayInputStream keys = new ByteArrayInputStream("q".getBytes(StandardCharsets.UTF_8));
        AtomicInteger fetched = new AtomicInteger();
        try (Terminal terminal = TerminalBuilder.builder().system(false).streams(keys, screen).type("xterm").size(
                new org.jline.terminal.Size(160, 40)).build()) {
            int frames = new TopScreen(terminal, () -> {
                fetched.incrementAndGet();
                return Future.succeededFuture(TWO);
            }, Duration.ofSeconds(5)).run(0);
            assertThat(frames).isEqualTo(1);
        }
        assertThat(fetched).hasValue(1);
        assertThat(screen.toString(StandardCharsets.UTF_8)).contains("kvpager top").contains("model-70b").contains("pp0/tp1");
    }

    @Test
    void stopsAfterTheFramesAsked() throws Exception {
        ByteArrayOutputStream screen = new ByteArrayOutputStream();
        try (Terminal terminal = TerminalBuilder.builder().system(false).streams(new java.io.PipedInputStream(new java.io.PipedOutputStream()), screen)
                .type("xterm").size(new org.jline.terminal.Size(160, 40)).build()) {
            assertThat(new TopScreen(terminal, () -> Future.succeededFuture(TWO), Duration.ofMillis(10)).run(3)).isEqualTo(3);
        }
    }
}
