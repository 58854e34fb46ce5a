package io.kvpager.cluster;

import java.util.Iterator;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The member addresses of nodes that said on the cluster's leaving topic that they are leaving, as
 * Hazelcast writes an endpoint ({@code [127.0.0.1]:5702}), for a short while after they said so.
 * A node that leaves gracefully is taken off the others' member lists only once their connection
 * monitor gives up on it, after a few refused reconnections; the log filter of the command line
 * ({@code io.kvpager.cli.ConnectionNotices}) reads this to keep that expected "Connection refused"
 * out of an ordinary stop, while the same line about a member that crashed still shows. It also
 * keeps the members of this process that are stopping themselves ({@link #stopping}): what they
 * log about their peers going away then is the stop itself. And it keeps when the cluster's master
 * (its oldest member) last said it is leaving: the member that takes over from it then says so at
 * WARN, though nothing is wrong.
 */
public final class Departures {

    /** How long an address is remembered: well past the connection monitor's last try. */
    static final long REMEMBER_NANOS = 60_000_000_000L;
    private static final int MOST = 256;
    private static final Map<String, Long> SAID = new ConcurrentHashMap<>();
    private static final Set<String> STOPPING = ConcurrentHashMap.newKeySet();
    /** When a master last said it is leaving, if one has: {@code null} when none has. */
    private static volatile Long masterLeftNanos;

    private Departures() {
    }

    /** The member at {@code host}:{@code port}, the cluster's master or not, said it is leaving. */
    public static void leaving(String host, int port, boolean master) {
        long now = System.nanoTime();
        if (master) {
            masterLeftNanos = now;
        }
        if (SAID.size() >= MOST) {
            forgetBefore(now - REMEMBER_NANOS);
        }
        if (SAID.size() < MOST) {
            SAID.put(endpoint(host, port), now);
        }
    }

    /** Whether the member at {@code endpoint} (written as Hazelcast writes it) said it is leaving within the last minute. */
    public static boolean said(String endpoint) {
        Long at = endpoint == null ? null : SAID.get(endpoint);
        return at != null && System.nanoTime() - at < REMEMBER_NANOS;
    }

    /** Whether the cluster's master said it is leaving within the last minute. */
    public static boolean masterSaidLeaving() {
        Long at = masterLeftNanos;
        return at != null && System.nanoTime() - at < REMEMBER_NANOS;
    }

    /**
     * This process's member at {@code host}:{@code port} is stopping (its node is closing): from here
     * on, what it logs about losing its peers (their connections refused, them suspected dead) is the
     * expected end of a stop in which the others stop too, as when a whole cluster gets SIGTERM.
     */
    public static void stopping(String host, int port) {
        STOPPING.add(endpoint(host, port));
    }

    /** This process's member at {@code host}:{@code port} has stopped: its node's close has ended. */
    public static void stopped(String host, int port) {
        STOPPING.remove(endpoint(host, port));
    }

    /**
     * Whether a node of this process is closing now: a message that reaches one of its event-bus
     * consumers already gone, sent by a peer that had not yet heard of the stop, is then expected.
     */
    public static boolean anyStopping() {
        return !STOPPING.isEmpty();
    }

    /**
     * Whether {@code line} was logged by a member of this process that is stopping: Hazelcast begins
     * each line of a member with that member's endpoint ({@code [127.0.0.1]:5703 [cluster] ...}).
     */
    public static boolean loggedWhileStopping(String line) {
        int end = line == null ? -1 : line.indexOf(' ');
        return end > 0 && STOPPING.contains(line.substring(0, end));
    }

    /** How Hazelcast writes a member's endpoint in its log lines. */
    static String endpoint(String host, int port) {
        return "[" + host + "]:" + port;
    }

    private static void forgetBefore(long nanos) {
        for (Iterator<Long> said = SAID.values().iterator(); said.hasNext(); ) {
            if (said.next() - nanos < 0) {
                said.remove();
            }
        }
    }
}
