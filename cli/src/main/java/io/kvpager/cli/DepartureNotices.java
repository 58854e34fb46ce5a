package io.kvpager.cli;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.turbo.TurboFilter;
import ch.qos.logback.core.spi.FilterReply;
import io.kvpager.cluster.Departures;
import org.slf4j.Marker;

import java.util.concurrent.atomic.AtomicLong;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Drops Hazelcast's "Removing connection to endpoint [host]:port Cause => ... Connection refused"
 * WARN about a member that said it was leaving ({@link Departures}): after a clean stop (SIGTERM,
 * Ctrl-C) every other node printed it, though nothing was wrong; the node's own leaving is already
 * told at INFO. The same line about a member that did not say so (it crashed, or its host is cut
 * off) still shows. Installed by {@code config/logback.xml}.
 */
public final class DepartureNotices extends TurboFilter {

    static final String CONNECTION_LOGGER = "com.hazelcast.internal.server.tcp.TcpServerConnectionErrorHandler";
    private static final Pattern ENDPOINT = Pattern.compile("endpoint (\\[[^\\]]+\\]:\\d+)");

    private final AtomicLong dropped = new AtomicLong();

    @Override
    public FilterReply decide(Marker marker, Logger logger, Level level, String format, Object[] params, Throwable t) {
        if (format == null || level != Level.WARN || !CONNECTION_LOGGER.equals(logger.getName())
                || !format.contains("Connection refused")) {
            return FilterReply.NEUTRAL;
        }
        Matcher endpoint = ENDPOINT.matcher(format);
        if (endpoint.find() && Departures.said(endpoint.group(1))) {
            dropped.incrementAndGet();
            return FilterReply.DENY;
        }
        return FilterReply.NEUTRAL;
    }

    /** How many lines this filter has dropped. */
    public long dropped() {
        return dropped.get();
    }
}
