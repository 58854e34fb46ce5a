package io.kvpager.cluster.process;

import io.vertx.core.json.JsonObject;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.io.PrintWriter;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * A node process spawned by a test ({@link NodeProcess}) on the test's own class path: its output
 * goes to {@code target/nodes/<name>.log}, and the test waits for its ready line (or any other) with
 * a bound. {@link #kill()} is SIGKILL, {@link #terminate()} SIGTERM; {@link #close()} asks it to
 * leave the cluster and kills it if it does not exit in time.
 */
public final class SpawnedNode implements AutoCloseable {

    private static final Duration EXIT_WAIT = Duration.ofSeconds(30);

    private final String name;
    private final Process process;
    private final CompletableFuture<String[]> ready = new CompletableFuture<>();
    private final Deque<String> lastLines = new ArrayDeque<>();
    private final List<String> lines = new ArrayList<>();
    private final Path log;
    private final Thread reader;

    private SpawnedNode(String name, Process process, Path log) {
        this.name = name;
        this.process = process;
        this.log = log;
        this.reader = new Thread(() -> read(log), "spawned-" + name);
        reader.setDaemon(true);
        reader.start();
    }

    /**
     * Spawns a node process for {@code spec}, with {@code jvmFlags} before the class path.
     */
    public static SpawnedNode spawn(String name, JsonObject spec, List<String> jvmFlags) {
        return spawn(name, spec, List.of(), jvmFlags);
    }

    /**
     * Spawns a node process for {@code spec} through {@code launcher} (a command prefix, such as
     * {@code ip netns exec NAME}, that execs the JVM in place, so that {@link #pid()} is the JVM's),
     * with {@code jvmFlags} before the class path.
     */
    public static SpawnedNode spawn(String name, JsonObject spec, List<String> launcher, List<String> jvmFlags) {
        Path log = Path.of("target", "nodes", name + ".log");
        try {
            Files.createDirectories(log.getParent());
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        List<String> command = new ArrayList<>(launcher);
        command.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
        command.addAll(jvmFlags);
        command.add("-Djava.net.preferIPv4Stack=true");
        command.add("-cp");
        command.add(System.getProperty("java.class.path"));
        command.add(NodeProcess.class.getName());
        command.add(spec.encode());
        try {
            Process process = new ProcessBuilder(command).redirectErrorStream(true).start();
            return new SpawnedNode(name, process, log);
        } catch (IOException e) {
            throw new UncheckedIOException("spawning node " + name, e);
        }
    }

    /** Spawns with the flags that start a small JVM quickly: C1 only, serial GC, a small heap. */
    public static SpawnedNode spawn(String name, JsonObject spec) {
        return spawn(name, spec, List.of(), SMALL_JVM);
    }

    /** The flags that start a small JVM quickly: C1 only, serial GC, a small heap. */
    public static final List<String> SMALL_JVM = List.of("-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC", "-Xmx256m", "-Xss512k");

    private void read(Path log) {
        try (BufferedReader in = new BufferedReader(new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8));
             PrintWriter out = new PrintWriter(Files.newBufferedWriter(log, StandardCharsets.UTF_8))) {
            String line;
            while ((line = in.readLine()) != null) {
                out.println(line);
                out.flush();
                synchronized (lastLines) {
                    lastLines.addLast(line);
                    if (lastLines.size() > 20) {
                        lastLines.removeFirst();
                    }
                    lines.add(line);
                    lastLines.notifyAll();
                }
                if (line.startsWith(NodeProcess.PREFIX + "ready ")) {
                    ready.complete(line.substring((NodeProcess.PREFIX + "ready ").length()).split(" "));
                } else if (line.startsWith(NodeProcess.PREFIX + "failed ")) {
                    ready.completeExceptionally(new IllegalStateException("node " + name + " failed to start: "
                            + line.substring((NodeProcess.PREFIX + "failed ").length())));
                }
            }
        } catch (IOException e) {
            ready.completeExceptionally(e);
        }
        ready.completeExceptionally(new IllegalStateException("node " + name + " exited before it was ready; its last lines: "
                + lastLines()));
    }

    /** Waits until the node is in the cluster with everything deployed; its node id. */
    public String awaitReady(Duration bound) {
        return readyLine(bound)[0];
    }

    /** Milliseconds the node took to join the cluster, as it measured them. */
    public long joinMillis() {
        return Long.parseLong(readyLine(Duration.ZERO)[1]);
    }

    /** Milliseconds from the node's main to ready (JVM start not included). */
    public long readyMillis() {
        return Long.parseLong(readyLine(Duration.ZERO)[2]);
    }

    private String[] readyLine(Duration bound) {
        try {
            return bound.isZero() ? ready.getNow(null) : ready.get(bound.toMillis(), TimeUnit.MILLISECONDS);
        } catch (TimeoutException e) {
            throw new IllegalStateException("node " + name + " not ready within " + bound + "; its last lines: " + lastLines(), e);
        } catch (ExecutionException e) {
            throw new IllegalStateException(e.getCause().getMessage(), e.getCause());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }

    public String name() {
        return name;
    }

    public long pid() {
        return process.pid();
    }

    /** SIGSTOP: the process stops where it is, as in a long GC pause, until {@link #resume()}. */
    public void pause() {
        signal("STOP");
    }

    /** SIGCONT: a paused process runs on. */
    public void resume() {
        signal("CONT");
    }

    private void signal(String signal) {
        try {
            Process kill = new ProcessBuilder("kill", "-" + signal, Long.toString(pid())).inheritIO().start();
            if (!kill.waitFor(10, TimeUnit.SECONDS) || kill.exitValue() != 0) {
                throw new IllegalStateException("kill -" + signal + " " + pid() + " failed");
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted while signalling " + name, e);
        }
    }

    /**
     * SIGTERM: the JVM runs its shutdown hooks, which close the node. Does not wait. Sent through
     * the process handle, which leaves the node's streams open (Process#destroy closes them, so
     * the node's last lines would be lost and its stdin would end as well).
     */
    public void terminate() {
        process.toHandle().destroy();
    }

    /** SIGTERM, then waits until the process is gone, at most 30 s. */
    public void terminateAndWait() {
        // through the handle: Process.destroy would also close our end of its output, losing what it says while it stops
        process.toHandle().destroy();
        try {
            if (!process.waitFor(EXIT_WAIT.toSeconds(), TimeUnit.SECONDS)) {
                throw new IllegalStateException("node " + name + " (pid " + process.pid() + ") did not exit within " + EXIT_WAIT
                        + " of SIGTERM; its last lines: " + lastLines());
            }
            // every line it wrote is in its log once the reader has seen the end of its output
            reader.join(EXIT_WAIT.toMillis());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    /** Every line the node has written so far (its log file). */
    public List<String> lines() {
        try {
            return Files.readAllLines(log, StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** Waits until the process has exited, at most {@code bound}; its exit code. */
    public int awaitExit(Duration bound) {
        try {
            if (!process.waitFor(bound.toMillis(), TimeUnit.MILLISECONDS)) {
                throw new IllegalStateException("node " + name + " still runs after " + bound + "; its last lines: " + lastLines());
            }
            return process.exitValue();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }

    /** Waits until the node has printed a line containing {@code text}, at most {@code bound}; that line. */
    public String awaitLine(String text, Duration bound) {
        long deadline = System.nanoTime() + bound.toNanos();
        synchronized (lastLines) {
            while (true) {
                for (String line : lines) {
                    if (line.contains(text)) {
                        return line;
                    }
                }
                long left = deadline - System.nanoTime();
                if (left <= 0) {
                    throw new IllegalStateException("node " + name + " printed no line with '" + text + "' within " + bound
                            + "; its last lines: " + lastLines());
                }
                try {
                    lastLines.wait(Math.max(1, left / 1_000_000));
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    throw new IllegalStateException(e);
                }
            }
        }
    }

    /** Every line the node has printed so far. */
    public List<String> output() {
        synchronized (lastLines) {
            return List.copyOf(lines);
        }
    }

    /** SIGKILL: the process dies without leaving the cluster. Waits until it is gone. */
    public void kill() {
        process.destroyForcibly();
        try {
            if (!process.waitFor(EXIT_WAIT.toSeconds(), TimeUnit.SECONDS)) {
                throw new IllegalStateException("node " + name + " (pid " + process.pid() + ") survived SIGKILL for " + EXIT_WAIT);
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    /** Asks the node to leave the cluster and exit; kills it when it does not within 30 s. */
    @Override
    public void close() {
        if (!process.isAlive()) {
            return;
        }
        try (OutputStream stdin = process.getOutputStream()) {
            stdin.write("close\n".getBytes(StandardCharsets.UTF_8));
        } catch (IOException e) {
            // it is exiting already
        }
        try {
            if (!process.waitFor(EXIT_WAIT.toSeconds(), TimeUnit.SECONDS)) {
                kill();
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            kill();
        }
    }

    private String lastLines() {
        synchronized (lastLines) {
            return String.join(" | ", lastLines);
        }
    }

    @Override
    public String toString() {
        return "SpawnedNode[" + name + " pid " + process.pid() + "]";
    }
}
