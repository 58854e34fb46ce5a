package io.kvpager.cli;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.turbo.TurboFilter;
import ch.qos.logback.core.spi.FilterReply;
import org.slf4j.Marker;

import java.net.BindException;

/**
 * Drops the lines a node's start prints that say nothing an operator must act on, or say it twice:
 * <ul>
 *   <li>Hazelcast's "Config seed port is 5701 and cluster size is 2. Some of the ports seem
 *       occupied!", printed on an ordinary start: every node on a host takes the first free member
 *       port from {@code --cluster-member-port} up, so a node that finds a lower one taken is
 *       working as meant;</li>
 *   <li>Hazelcast's "Ignoring received partition table, startup is not completed yet" and
 *       "Following unknown addresses are found in partition table sent from master", printed when
 *       nodes start at once (three launchers started together): a member that is still joining
 *       gets the master's table before its own start or member list has caught up, and the master
 *       sends it again;</li>
 *   <li>Vert.x's "Failed to initialize clustered Vert.x" with the whole stack trace of a
 *       {@link BindException}: the command itself fails with one line that names the port and
 *       its flag.</li>
 * </ul>
 * Installed by {@code config/logback.xml}.
 */
public final class StartNotices extends TurboFilter {

    static final String MEMBER_LOGGER = "com.hazelcast.instance.impl.Node";
    static final String OCCUPIED = "Some of the ports seem occupied";
    static final String PARTITION_LOGGER = "com.hazelcast.internal.partition.InternalPartitionService";
    static final String STARTUP_NOT_COMPLETED = "Ignoring received partition table, startup is not completed yet";
    static final String UNKNOWN_ADDRESSES = "Following unknown addresses are found in partition table sent from master";
    static final String VERTX_LOGGER = "io.vertx.core.impl.VertxImpl";
    static final String CLUSTER_INIT = "Failed to initialize clustered Vert.x";

    @Override
    public FilterReply decide(Marker marker, Logger logger, Level level, String format, Object[] params, Throwable t) {
        if (format == null) {
            return FilterReply.NEUTRAL;
        }
        if (level == Level.WARN && MEMBER_LOGGER.equals(logger.getName()) && format.contains(OCCUPIED)) {
            return FilterReply.DENY;
        }
        if (level == Level.WARN && PARTITION_LOGGER.equals(logger.getName())
                && (format.contains(STARTUP_NOT_COMPLETED) || format.contains(UNKNOWN_ADDRESSES))) {
            return FilterReply.DENY;
        }
        if (VERTX_LOGGER.equals(logger.getName()) && format.contains(CLUSTER_INIT) && bindFailure(t)) {
            return FilterReply.DENY;
        }
        return FilterReply.NEUTRAL;
    }

    private static boolean bindFailure(Throwable t) {
        for (Throwable cause = t; cause != null; cause = cause.getCause()) {
            if (cause instanceof BindException) {
                return true;
            }
        }
        return false;
    }
}
