package io.kvpager.cluster.process;

import org.junit.jupiter.api.Assumptions;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;

/**
 * A Linux network namespace of a test's own, joined to this host's by a veth pair on a private
 * /30 that never leaves the host ({@code 10.213.x.y}): the host end's address is
 * {@link #hostAddress()}, the namespace end's {@link #innerAddress()}. A process started through
 * {@link #launcher()} sees only the namespace's side, so {@link #cut()} (the host end's link down)
 * partitions it from every node on the host, as a failed switch port would, until {@link #heal()}.
 * Names are unique per run; {@link #close()} removes the pair and the namespace.
 *
 * <p>Needs root and {@code ip} with netns support: {@link #create()} aborts the test (a JUnit
 * assumption, reported as skipped with the reason) where either is missing.
 */
public final class NetworkNamespace implements AutoCloseable {

    private static final long COMMAND_TIMEOUT_S = 10;

    private final String name;
    private final String hostLink;
    private final String innerLink;
    private final String hostAddress;
    private final String innerAddress;
    private final List<List<String>> undo = new ArrayList<>();

    private NetworkNamespace(String tag, int subnet) {
        this.name = "kvp-" + tag;
        // interface names hold 15 characters at most
        this.hostLink = "kvp" + tag + "h";
        this.innerLink = "kvp" + tag + "n";
        int base = subnet * 4;
        String prefix = "10.213." + (base >> 8) + ".";
        this.hostAddress = prefix + ((base & 0xff) + 1);
        this.innerAddress = prefix + ((base & 0xff) + 2);
    }

    /**
     * Creates the namespace and the pair with their addresses, links up; aborts the calling test
     * (skipped, with the reason) where this machine does not permit it.
     */
    public static NetworkNamespace create() {
        Assumptions.assumeTrue(System.getProperty("os.name", "").toLowerCase(Locale.ROOT).contains("linux"),
                "a partition needs Linux network namespaces; this is " + System.getProperty("os.name"));
        String uid = run(List.of("id", "-u"));
        Assumptions.assumeTrue(uid != null && uid.strip().equals("0"),
                "a partition needs root to create a network namespace and a veth pair (ip netns add); this test runs as uid " + uid);
        Assumptions.assumeTrue(run(List.of("ip", "-V")) != null, "a partition needs the ip command (iproute2), which is not on the PATH");
        String tag = Integer.toHexString(ThreadLocalRandom.current().nextInt(0x100000, 0xffffff));
        NetworkNamespace namespace = new NetworkNamespace(tag, ThreadLocalRandom.current().nextInt(1 << 14));
        try {
            namespace.setUp();
        } catch (IllegalStateException e) {
            namespace.close();
            Assumptions.abort("this machine does not permit a network namespace with a veth pair: " + e.getMessage());
        }
        return namespace;
    }

    private void setUp() {
        String inUse = run(List.of("ip", "-4", "-o", "addr"));
        if (inUse == null || inUse.contains(hostAddress + "/") || inUse.contains(innerAddress + "/")) {
            throw new IllegalStateException(hostAddress + " or " + innerAddress + " is in use on this host already");
        }
        must("ip", "netns", "add", name);
        undo.add(List.of("ip", "netns", "del", name));
        must("ip", "link", "add", hostLink, "type", "veth", "peer", "name", innerLink);
        // deleting one end deletes both
        undo.addFirst(List.of("ip", "link", "del", hostLink));
        must("ip", "link", "set", innerLink, "netns", name);
        must("ip", "addr", "add", hostAddress + "/30", "dev", hostLink);
        must("ip", "link", "set", hostLink, "up");
        must("ip", "netns", "exec", name, "ip", "addr", "add", innerAddress + "/30", "dev", innerLink);
        must("ip", "netns", "exec", name, "ip", "link", "set", innerLink, "up");
        must("ip", "netns", "exec", name, "ip", "link", "set", "lo", "up");
    }

    /** The address of the host's end: nodes outside the namespace bind it. */
    public String hostAddress() {
        return hostAddress;
    }

    /** The address of the namespace's end: a node in the namespace binds it. */
    public String innerAddress() {
        return innerAddress;
    }

    /** The command prefix that runs a program in the namespace. */
    public List<String> launcher() {
        return List.of("ip", "netns", "exec", name);
    }

    /** The link down: nothing passes between the namespace and the host until {@link #heal()}. */
    public void cut() {
        must("ip", "link", "set", hostLink, "down");
    }

    /** The link up again, with its address and route. */
    public void heal() {
        must("ip", "link", "set", hostLink, "up");
    }

    /** Removes the pair and the namespace; what runs in it should be gone first. */
    @Override
    public void close() {
        for (List<String> command : undo) {
            run(command);
        }
        undo.clear();
    }

    @Override
    public String toString() {
        return "NetworkNamespace[" + name + " " + hostAddress + " <-> " + innerAddress + "]";
    }

    private static void must(String... command) {
        String failure = attempt(List.of(command));
        if (failure != null) {
            throw new IllegalStateException(failure);
        }
    }

    /** The command's output when it exits 0, else {@code null}. */
    private static String run(List<String> command) {
        try {
            Process process = new ProcessBuilder(command).redirectErrorStream(true).start();
            String out = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
            return process.waitFor(COMMAND_TIMEOUT_S, TimeUnit.SECONDS) && process.exitValue() == 0 ? out : null;
        } catch (IOException e) {
            return null;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return null;
        }
    }

    /** {@code null} when the command exits 0, else what it said. */
    private static String attempt(List<String> command) {
        try {
            Process process = new ProcessBuilder(command).redirectErrorStream(true).start();
            String out = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8).strip();
            if (!process.waitFor(COMMAND_TIMEOUT_S, TimeUnit.SECONDS)) {
                process.destroyForcibly();
                return String.join(" ", command) + " did not finish within " + COMMAND_TIMEOUT_S + " s";
            }
            return process.exitValue() == 0 ? null : String.join(" ", command) + " exited " + process.exitValue() + ": " + out;
        } catch (IOException e) {
            throw new UncheckedIOException(String.join(" ", command), e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }
}
