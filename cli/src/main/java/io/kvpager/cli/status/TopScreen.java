package io.kvpager.cli.status;

import io.vertx.core.Future;
import java.io.IOException;
import java.time.Duration;
import java.time.LocalTime;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Supplier;
import org.jline.terminal.Attributes;
import org.jline.terminal.Terminal;
import org.jline.utils.AttributedString;
import org.jline.utils.Display;
import org.jline.utils.InfoCmp.Capability;
import org.jline.utils.NonBlockingReader;

/**
 * {@code kvpager top}: the status of every instance, redrawn in place every interval until
 * {@code q} or Ctrl-C. JLine owns the terminal (raw mode, the alternate screen, redrawing only
 * what changed); {@link #frame} makes the text, so it is tested without a terminal.
 */
public final class TopScreen {

    private static final DateTimeFormatter CLOCK = DateTimeFormatter.ofPattern("HH:mm:ss");
    private static final long FETCH_TIMEOUT_S = 30;

    private final Terminal terminal;
    private final Supplier<Future<List<InstanceStatus>>> source;
    private final Duration interval;

    public TopScreen(Terminal terminal, Supplier<Future<List<InstanceStatus>>> source, Duration interval) {
        if (interval.isNegative() || interval.isZero()) {
            throw new IllegalArgumentException("the refresh interval must be positive, got " + interval);
        }
        this.terminal = terminal;
        this.source = source;
        this.interval = interval;
    }

    /** One screenful: a header line, then the status table, cut to {@code width} × {@code height}. */
    public static List<String> frame(List<InstanceStatus> instances, LocalTime at, Duration interval, int width, int height) {
        List<String> lines = new ArrayList<>();
        long healthy = instances.stream().filter(InstanceStatus::healthy).count();
        lines.add("kvpager top  " + CLOCK.format(at) + "  " + instances.size() + " instances, " + healthy + " healthy  every "
                + interval.toMillis() + " ms  (q quits)");
        lines.add("");
        lines.addAll(StatusTable.render(instances).lines().toList());
        List<String> cut = new ArrayList<>();
        for (String line : lines.subList(0, Math.min(lines.size(), Math.max(1, height)))) {
            cut.add(width > 0 && line.length() > width ? line.substring(0, width) : line);
        }
        return cut;
    }

    /**
     * Redraws until {@code q}, Ctrl-C or end of input, or after {@code frames} frames when positive.
     *
     * @return the frames drawn
     */
    public int run(int frames) throws IOException, InterruptedException {
        AtomicBoolean stop = new AtomicBoolean();
        Terminal.SignalHandler previous = terminal.handle(Terminal.Signal.INT, signal -> stop.set(true));
        Attributes attributes = terminal.enterRawMode();
        terminal.puts(Capability.enter_ca_mode);
        terminal.puts(Capability.cursor_invisible);
        Display display = new Display(terminal, true);
        int drawn = 0;
        try {
            NonBlockingReader keys = terminal.reader();
            while (!stop.get() && (frames <= 0 || drawn < frames)) {
                List<InstanceStatus> status = source.get().await(FETCH_TIMEOUT_S, TimeUnit.SECONDS);
                int width = terminal.getWidth() > 0 ? terminal.getWidth() : 160;
                int height = terminal.getHeight() > 0 ? terminal.getHeight() : 50;
                display.resize(height, width);
                display.update(frame(status, LocalTime.now(), interval, width, height).stream().map(AttributedString::new).toList(), 0);
                terminal.flush();
                drawn++;
                if (frames > 0 && drawn >= frames) {
                    break;
                }
                int key = keys.read(interval.toMillis());
                if (key == 'q' || key == 'Q' || key == 3 || key == NonBlockingReader.EOF) {
                    break;
                }
            }
        } catch (java.util.concurrent.TimeoutException e) {
            throw new IOException("the instances did not answer within " + FETCH_TIMEOUT_S + " s", e);
        } finally {
            terminal.puts(Capability.cursor_visible);
            terminal.puts(Capability.exit_ca_mode);
            terminal.setAttributes(attributes);
            terminal.handle(Terminal.Signal.INT, previous);
            terminal.flush();
        }
        return drawn;
    }
}
