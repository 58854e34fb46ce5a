package io.kvpager.cli;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.turbo.TurboFilter;
import ch.qos.logback.core.spi.FilterReply;
import io.kvpager.cluster.Departures;
import org.slf4j.Marker;

import java.io.IOException;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.BooleanSupplier;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Keeps Hazelcast's lines about member connections to what an operator needs:
 * <ul>
 *   <li>"Removing connection to endpoint [host]:port Cause => ... Connection refused" and "Member
 *       [host]:port ... is suspected to be dead for reason: No connection" about a member that said
 *       it was leaving ({@link Departures}) are dropped: after a clean stop (SIGTERM, Ctrl-C) every
 *       other node printed them, though nothing was wrong, and the leaving is told at INFO already
 *       (a rank's leaving, at WARN, by the coordinator that uses it). About a member that did not
 *       say so (it crashed, or its host is cut off) the lines stay;</li>
 *   <li>"Mastership of [host]:port is accepted", which every member prints when a new master takes
 *       over, after the master said it was leaving ({@link Departures#masterSaidLeaving});</li>
 *   <li>The refusal and the suspicion about any member, and "partitionId=N is completely lost!" and
 *       "Assigning new owners for N LOST partitions!", logged by a member of this process whose
 *       node is stopping ({@link Departures#stopping}): when a whole cluster is stopped at once
 *       (SIGTERM to every node), a node still closing saw the others go before they could say so,
 *       and the data they held with them, and printed it all, though nothing was wrong;</li>
 *   <li>Vert.x's "Discarding message since the consumer is not registered. address: kvpager...."
 *       while a node of this process is closing ({@link Departures#anyStopping}): a peer that had not
 *       yet heard of the stop sent to a worker or coordinator already undeployed; the sender's own
 *       timeout answers it. About a consumer gone while no node stops, or an address not kvpager's,
 *       the line stays;</li>
 *   <li>"Connection[...] closed. Reason: Exception in Connection[...]" with the stack trace of the
 *       socket's {@link IOException} (broken pipe, reset by peer: a member was killed) is said in
 *       one line, the exception's text at its end, instead of fourteen.</li>
 * </ul>
 * Installed by {@code config/logback.xml}.
 */
public final class ConnectionNotices extends TurboFilter {

    static final String ERRORS_LOGGER = "com.hazelcast.internal.server.tcp.TcpServerConnectionErrorHandler";
    static final String CONNECTION_LOGGER = "com.hazelcast.internal.server.tcp.TcpServerConnection";
    static final String HAZELCAST = "com.hazelcast.";
    static final String SUSPECTED = "is suspected to be dead";
    static final String PARTITION_LOST = "is completely lost!";
    static final String PARTITIONS_LOST = "LOST partitions!";
    static final String MEMBERSHIP_LOGGER = "com.hazelcast.internal.cluster.impl.MembershipManager";
    static final String CLUSTER_LOGGER = "com.hazelcast.internal.cluster.ClusterService";
    static final String MASTERSHIP_ACCEPTED = "is accepted";
    static final String CONSUMER_LOGGER = "io.vertx.core.eventbus.impl.MessageConsumerImpl";
    static final String DISCARDED = "Discarding message since the consumer is not registered. address: kvpager.";
    private static final Pattern ENDPOINT = Pattern.compile("endpoint (\\[[^\\]]+\\]:\\d+)");
    private static final Pattern SUSPECTED_MEMBER = Pattern.compile("Member (\\[[^\\]]+\\]:\\d+) - \\S+ " + SUSPECTED);

    private final AtomicLong dropped = new AtomicLong();
    private final AtomicLong shortened = new AtomicLong();
    /** Whether a node of this process is closing: {@link Departures#anyStopping}, or a test's own. */
    private final BooleanSupplier nodeStopping;

    /** The filter {@code config/logback.xml} installs. */
    public ConnectionNotices() {
        this(Departures::anyStopping);
    }

    ConnectionNotices(BooleanSupplier nodeStopping) {
        this.nodeStopping = nodeStopping;
    }

    @Override
    public FilterReply decide(Marker marker, Logger logger, Level level, String format, Object[] params, Throwable t) {
        if (format == null || level != Level.WARN) {
            return FilterReply.NEUTRAL;
        }
        if (logger.getName().startsWith(HAZELCAST) && (format.contains("Connection refused") || format.contains(SUSPECTED)
                || format.contains(PARTITION_LOST) || format.contains(PARTITIONS_LOST)) && Departures.loggedWhileStopping(format)) {
            dropped.incrementAndGet();
            return FilterReply.DENY;
        }
        if (CONSUMER_LOGGER.equals(logger.getName()) && format.startsWith(DISCARDED) && nodeStopping.getAsBoolean()) {
            dropped.incrementAndGet();
            return FilterReply.DENY;
        }
        if (ERRORS_LOGGER.equals(logger.getName()) && format.contains("Connection refused")) {
            return dropIfSaidLeaving(ENDPOINT.matcher(format));
        }
        if (MEMBERSHIP_LOGGER.equals(logger.getName()) && format.contains(SUSPECTED)) {
            return dropIfSaidLeaving(SUSPECTED_MEMBER.matcher(format));
        }
        if (CLUSTER_LOGGER.equals(logger.getName()) && format.contains("Mastership of ") && format.contains(MASTERSHIP_ACCEPTED)
                && Departures.masterSaidLeaving()) {
            dropped.incrementAndGet();
            return FilterReply.DENY;
        }
        if (CONNECTION_LOGGER.equals(logger.getName()) && t instanceof IOException && format.contains(" closed. Reason: ")) {
            shortened.incrementAndGet();
            // logged again without the throwable, which this filter lets through
            logger.warn("{}: {}", format, t.toString());
            return FilterReply.DENY;
        }
        return FilterReply.NEUTRAL;
    }

    /** Drops the line if the member its first group names said it was leaving. */
    private FilterReply dropIfSaidLeaving(Matcher member) {
        if (member.find() && Departures.said(member.group(1))) {
            dropped.incrementAndGet();
            return FilterReply.DENY;
        }
        return FilterReply.NEUTRAL;
    }

    /** How many lines about leaving members, or logged by a stopping node, this filter has dropped. */
    public long dropped() {
        return dropped.get();
    }

    /** How many stack traces of a closed connection this filter has said in one line. */
    public long shortened() {
        return shortened.get();
    }
}
