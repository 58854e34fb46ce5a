package io.kvpager.cli.demo;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;

class DemoProgressTest {

    @Test
    void messagesAreCutOrPaddedToOneWidth() {
        assertThat(DemoProgress.fixedWidth("")).hasSize(DemoProgress.MESSAGE_WIDTH).isBlank();
        assertThat(DemoProgress.fixedWidth(null)).hasSize(DemoProgress.MESSAGE_WIDTH);
        assertThat(DemoProgress.fixedWidth("1,204 tokens")).hasSize(DemoProgress.MESSAGE_WIDTH).startsWith("1,204 tokens ");
        String long_ = "x".repeat(DemoProgress.MESSAGE_WIDTH + 40);
        assertThat(DemoProgress.fixedWidth(long_)).hasSize(DemoProgress.MESSAGE_WIDTH).endsWith("…");
    }

    @Test
    void theBarKeepsOneWidthWhateverTheMessage() {
        List<String> lines = List.of("", "1 tokens", "123,456 tokens | 7b 119.0G 13b 97.5G 70b 106.3G | misses 302",
                "y".repeat(200)).stream().map(DemoProgressTest::lastLine).toList();
        // the bar ends at the same column on every line, whatever follows it
        assertThat(lines).allSatisfy(line -> assertThat(line.indexOf(']')).isEqualTo(lines.getFirst().indexOf(']')));
        assertThat(lines.get(2)).contains("123,456 tokens");
    }

    /** The line a run of 10 s prints last, at 9 s with {@code message}. */
    private static String lastLine(String message) {
        StringWriter text = new StringWriter();
        try (DemoProgress progress = new DemoProgress(new PrintWriter(text), false, Duration.ofSeconds(10))) {
            progress.update(9_000, message);
        }
        List<String> lines = text.toString().lines().filter(line -> !line.isBlank()).toList();
        assertThat(lines).isNotEmpty();
        return lines.getLast();
    }
}
