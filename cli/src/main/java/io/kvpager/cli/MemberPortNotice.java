package io.kvpager.cli;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.turbo.TurboFilter;
import ch.qos.logback.core.spi.FilterReply;
import org.slf4j.Marker;

/**
 * Drops Hazelcast's "Config seed port is 5701 and cluster size is 2. Some of the ports seem
 * occupied!" warning, which a kvpager node prints on an ordinary start: every node on a host takes
 * the first free member port from {@code --cluster-member-port} up, so a node that finds a lower one
 * taken (by a node of another cluster, or one that left) is working as meant. A port that cannot be
 * bound at all still fails the start with its own message. Installed by {@code config/logback.xml}.
 */
public final class MemberPortNotice extends TurboFilter {

    static final String LOGGER = "com.hazelcast.instance.impl.Node";
    static final String TEXT = "Some of the ports seem occupied";

    @Override
    public FilterReply decide(Marker marker, Logger logger, Level level, String format, Object[] params, Throwable t) {
        return format != null && level == Level.WARN && LOGGER.equals(logger.getName()) && format.contains(TEXT)
                ? FilterReply.DENY : FilterReply.NEUTRAL;
    }
}
