package io.kvpager.cli;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.LoggerContext;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import ch.qos.logback.core.spi.FilterReply;
import io.kvpager.cluster.ClusterNode;
import io.kvpager.cluster.ClusterNodeOptions;
import io.kvpager.cluster.Departures;
import org.junit.jupiter.api.Test;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.time.Duration;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * After a node stops cleanly, the others no longer print Hazelcast's "Connection refused" WARN
 * about it; about a member that never said it was leaving, the line stays.
 */
class DepartureNoticesTest {

    private static final String REFUSED = "[127.0.0.1]:5701 [llama-prod] [5.3.8] Removing connection to endpoint [127.0.0.1]:%d"
            + " Cause => java.io.IOException {Connection refused to address /127.0.0.1:%d}, Error-Count: 5";

    private final LoggerContext context = (LoggerContext) LoggerFactory.getILoggerFactory();

    @Test
    void onlyTheRefusalsOfAMemberThatSaidItWasLeavingAreDropped() {
        DepartureNotices notices = new DepartureNotices();
        Logger connections = context.getLogger(DepartureNotices.CONNECTION_LOGGER);
        int left = freePort();
        int crashed = freePort();
        String aboutLeft = String.format(REFUSED, left, left);
        assertThat(notices.decide(null, connections, Level.WARN, aboutLeft, null, null)).isEqualTo(FilterReply.NEUTRAL);

        Departures.leaving("127.0.0.1", left);
        assertThat(notices.decide(null, connections, Level.WARN, aboutLeft, null, null)).isEqualTo(FilterReply.DENY);
        assertThat(notices.decide(null, connections, Level.WARN, String.format(REFUSED, crashed, crashed), null, null))
                .as("a member that did not say it was leaving").isEqualTo(FilterReply.NEUTRAL);
        assertThat(notices.decide(null, context.getLogger("com.hazelcast.other"), Level.WARN, aboutLeft, null, null))
                .isEqualTo(FilterReply.NEUTRAL);
        assertThat(notices.decide(null, connections, Level.ERROR, aboutLeft, null, null)).isEqualTo(FilterReply.NEUTRAL);
        assertThat(notices.dropped()).isEqualTo(1);
    }

    @Test
    void aCleanStopLeavesNoConnectionRefusedLineOnTheOtherNode() throws Exception {
        DepartureNotices notices = new DepartureNotices();
        notices.start();
        context.addTurboFilter(notices);
        ListAppender<ILoggingEvent> lines = new ListAppender<>();
        lines.setContext(context);
        lines.start();
        Logger connections = context.getLogger(DepartureNotices.CONNECTION_LOGGER);
        connections.addAppender(lines);
        String cluster = "kvpager-departures-" + UUID.randomUUID().toString().substring(0, 8);
        int firstPort = freePort();
        ClusterNode first = start(cluster, firstPort, "127.0.0.1:" + firstPort);
        ClusterNode second = null;
        try {
            second = start(cluster, freePort(), first.memberAddress());
            assertThat(first.members()).isEqualTo(2);
            String endpoint = "[127.0.0.1]:" + second.memberAddress().substring(second.memberAddress().lastIndexOf(':') + 1);
            second.close().await(30, TimeUnit.SECONDS);
            second = null;
            await().atMost(Duration.ofSeconds(30)).until(() -> first.members() == 1);
            assertThat(Departures.said(endpoint)).isTrue();
            assertThat(notices.dropped()).as("Hazelcast's refused reconnections to the member that left").isPositive();
            List<String> refused = lines.list.stream().map(ILoggingEvent::getFormattedMessage)
                    .filter(line -> line.contains("Connection refused")).toList();
            assertThat(refused).isEmpty();
        } finally {
            connections.detachAppender(lines);
            context.getTurboFilterList().remove(notices);
            if (second != null) {
                second.close().await(30, TimeUnit.SECONDS);
            }
            first.close().await(30, TimeUnit.SECONDS);
        }
    }

    private static ClusterNode start(String cluster, int memberPort, String join) throws Exception {
        ClusterNodeOptions options = new ClusterNodeOptions().setClusterName(cluster).setHost("127.0.0.1").setMemberPort(memberPort)
                .setMembers(List.of(join));
        return ClusterNode.start(options).await(60, TimeUnit.SECONDS);
    }

    private static int freePort() {
        try (ServerSocket socket = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            return socket.getLocalPort();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
