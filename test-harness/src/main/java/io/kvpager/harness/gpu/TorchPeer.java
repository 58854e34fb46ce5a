package io.kvpager.harness.gpu;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStreamWriter;
import java.io.Writer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.TimeUnit;

/**
 * A peer process that times one round of its own per request, so that its rounds alternate with
 * the Java side's (the torch script's {@code --serve} mode): it prints {@code ready} once set up,
 * then answers each {@code round} line on its standard input with one {@code time KEY micros}
 * line per shape and {@code done}; {@code quit} ends it. Every other line it prints is echoed
 * with a prefix. A peer that cannot start, or dies, answers no more rounds; {@link #failure()}
 * says why.
 */
final class TorchPeer implements AutoCloseable {

    private static final String PREFIX = "torch peer: ";

    private final Process process;
    private final BufferedReader output;
    private final Writer input;
    private String failure;

    private TorchPeer(Process process, String failure) {
        this.process = process;
        this.output = process == null ? null
                : new BufferedReader(new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8));
        this.input = process == null ? null : new OutputStreamWriter(process.getOutputStream(), StandardCharsets.UTF_8);
        this.failure = failure;
    }

    /** Starts {@code command} and waits for its {@code ready} line; a failed peer where it cannot start. */
    static TorchPeer start(List<String> command) {
        Process process;
        try {
            process = new ProcessBuilder(command).redirectErrorStream(true).start();
        } catch (IOException e) {
            return none("cannot start " + command.getFirst() + ": " + e.getMessage());
        }
        TorchPeer peer = new TorchPeer(process, null);
        peer.readUntil("ready");
        return peer;
    }

    /** A peer that answers no rounds, for {@code why} (printed). */
    static TorchPeer none(String why) {
        System.out.println(PREFIX + why);
        return new TorchPeer(null, why);
    }

    /** Why this peer answers no rounds; empty while it does. */
    Optional<String> failure() {
        return Optional.ofNullable(failure);
    }

    /** Asks for one round: microseconds per launch by shape key; empty once the peer failed. */
    Map<String, Double> round() {
        if (failure != null) {
            return Map.of();
        }
        try {
            input.write("round\n");
            input.flush();
        } catch (IOException e) {
            fail("cannot send it a round: " + e.getMessage());
            return Map.of();
        }
        return readUntil("done");
    }

    /** Reads lines up to {@code end}, echoing all but the times, which it returns. */
    private Map<String, Double> readUntil(String end) {
        Map<String, Double> times = new HashMap<>();
        try {
            String line;
            while ((line = output.readLine()) != null) {
                String trimmed = line.trim();
                if (trimmed.equals(end)) {
                    return times;
                }
                String[] f = trimmed.split("\\s+");
                if (f.length == 3 && f[0].equals("time")) {
                    try {
                        times.put(f[1], Double.parseDouble(f[2]));
                        continue;
                    } catch (NumberFormatException e) {
                        // echoed below as any other line
                    }
                }
                System.out.println(PREFIX + line);
            }
            fail("its output ended before '" + end + "'" + exitCode());
        } catch (IOException e) {
            fail("cannot read its output: " + e.getMessage());
        }
        return Map.of();
    }

    private String exitCode() {
        try {
            return process.waitFor(10, TimeUnit.SECONDS) ? " (exit " + process.exitValue() + ")" : "";
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return "";
        }
    }

    private void fail(String why) {
        failure = why;
        System.out.println(PREFIX + why);
        process.destroyForcibly();
    }

    /** Asks the peer to quit and waits for it (bounded); kills it if it does not. */
    @Override
    public void close() {
        if (process == null) {
            return;
        }
        try {
            if (process.isAlive()) {
                input.write("quit\n");
                input.close();
            }
        } catch (IOException e) {
            // it is gone already: nothing to ask
        }
        try {
            if (!process.waitFor(10, TimeUnit.SECONDS)) {
                process.destroyForcibly();
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            process.destroyForcibly();
        }
    }

    /** Adds one round's figures to those of the rounds before, by shape key. */
    static void add(Map<String, List<Double>> into, Map<String, Double> round) {
        round.forEach((key, micros) -> into.computeIfAbsent(key, k -> new ArrayList<>()).add(micros));
    }
}
