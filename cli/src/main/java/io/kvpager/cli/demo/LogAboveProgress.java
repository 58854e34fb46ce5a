package io.kvpager.cli.demo;

import java.io.IOException;
import java.io.OutputStream;
import java.io.PrintStream;

/**
 * Keeps log lines and the progress line apart on a terminal: while installed, {@code System.err}
 * (where logback's console appender writes) first erases the progress line the bar drew, so a log
 * line starts at the left margin instead of after the bar; the bar redraws itself at its next tick.
 */
final class LogAboveProgress implements AutoCloseable {

    private static final String ERASE_LINE = "\r\033[K";

    private final PrintStream original;
    private final Object lock = new Object();
    private boolean drawn;

    private LogAboveProgress(PrintStream original) {
        this.original = original;
    }

    /** Puts itself in front of {@code System.err} until closed. */
    static LogAboveProgress install() {
        LogAboveProgress guard = new LogAboveProgress(System.err);
        System.setErr(new PrintStream(guard.stream(), true));
        return guard;
    }

    /** Draws the progress line ({@code draw} writes it) and remembers it is on screen. */
    void draw(Runnable draw) {
        synchronized (lock) {
            draw.run();
            drawn = true;
        }
    }

    private OutputStream stream() {
        return new OutputStream() {
            @Override
            public void write(int b) {
                write(new byte[] {(byte) b}, 0, 1);
            }

            @Override
            public void write(byte[] bytes, int offset, int length) {
                synchronized (lock) {
                    if (drawn) {
                        original.print(ERASE_LINE);
                        drawn = false;
                    }
                    original.write(bytes, offset, length);
                }
            }

            @Override
            public void flush() throws IOException {
                original.flush();
            }
        };
    }

    @Override
    public void close() {
        System.err.flush();
        System.setErr(original);
    }
}
