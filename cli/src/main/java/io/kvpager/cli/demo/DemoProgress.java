package io.kvpager.cli.demo;

import java.io.PrintWriter;
import java.time.Duration;
import me.tongfei.progressbar.DelegatingProgressBarConsumer;
import me.tongfei.progressbar.ProgressBar;
import me.tongfei.progressbar.ProgressBarBuilder;
import me.tongfei.progressbar.ProgressBarStyle;

/**
 * The progress line while the demo runs: elapsed time against the run's length, with tokens
 * served, memory per model and misses. On a terminal it redraws one line, which a log line erases
 * before it prints ({@link LogAboveProgress}); elsewhere (a log, a test) it prints a line every few
 * seconds.
 */
final class DemoProgress implements AutoCloseable {

    private static final int WIDTH = 120;
    /** The message's room on the line, always filled, so that the bar keeps one width from the first line on. */
    static final int MESSAGE_WIDTH = 64;

    private final ProgressBar bar;
    private final PrintWriter err;
    private final boolean terminal;
    private final LogAboveProgress logs;

    DemoProgress(PrintWriter err, boolean terminal, Duration duration) {
        this.err = err;
        this.terminal = terminal;
        ProgressBarBuilder builder = new ProgressBarBuilder()
                .setTaskName("demo")
                .setInitialMax(duration.toMillis())
                .setUnit("s", 1000)
                .setStyle(terminal ? ProgressBarStyle.COLORFUL_UNICODE_BLOCK : ProgressBarStyle.ASCII)
                .hideEta();
        if (terminal) {
            logs = LogAboveProgress.install();
            builder.setUpdateIntervalMillis(200).setConsumer(new DelegatingProgressBarConsumer(line -> logs.draw(() -> {
                err.print('\r' + line);
                err.flush();
            }), WIDTH));
        } else {
            logs = null;
            builder.setUpdateIntervalMillis(2000).setConsumer(new DelegatingProgressBarConsumer(line -> {
                err.println(line);
                err.flush();
            }, WIDTH));
        }
        bar = builder.build();
        bar.setExtraMessage(fixedWidth(""));
    }

    /** {@code message} cut or padded to {@value #MESSAGE_WIDTH} characters. */
    static String fixedWidth(String message) {
        String text = message == null ? "" : message;
        if (text.length() > MESSAGE_WIDTH) {
            return text.substring(0, MESSAGE_WIDTH - 1) + "…";
        }
        return text + " ".repeat(MESSAGE_WIDTH - text.length());
    }

    void update(long elapsedMs, String message) {
        bar.stepTo(Math.min(elapsedMs, bar.getMax()));
        bar.setExtraMessage(fixedWidth(message));
    }

    @Override
    public void close() {
        bar.close();
        if (terminal) {
            err.println();
            err.flush();
            logs.close();
        }
    }
}
