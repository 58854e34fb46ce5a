package io.kvpager.cli.demo;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;

/** A log line written to System.err while the progress line is drawn starts on a line of its own. */
class LogAboveProgressTest {

    @Test
    void aLogLineErasesTheProgressLineFirst() {
        PrintStream saved = System.err;
        ByteArrayOutputStream screen = new ByteArrayOutputStream();
        System.setErr(new PrintStream(screen, true, StandardCharsets.UTF_8));
        try (LogAboveProgress logs = LogAboveProgress.install()) {
            PrintStream bar = new PrintStream(screen, true, StandardCharsets.UTF_8);
            logs.draw(() -> bar.print("\rdemo  40% [====      ]"));
            System.err.println("12:00:01.234 WARN  ModelServer - model-7b alloc failed");
            System.err.println("a second line");
            logs.draw(() -> bar.print("\rdemo  50% [=====     ]"));
        } finally {
            System.setErr(saved);
        }
        assertThat(screen.toString(StandardCharsets.UTF_8)).isEqualTo("\rdemo  40% [====      ]\r\033[K"
                + "12:00:01.234 WARN  ModelServer - model-7b alloc failed" + System.lineSeparator()
                + "a second line" + System.lineSeparator() + "\rdemo  50% [=====     ]");
    }
}
