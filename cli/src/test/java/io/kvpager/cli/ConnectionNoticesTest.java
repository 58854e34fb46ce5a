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
import java.util.concurrent.atomic.AtomicBoolean;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * After a node stops cleanly, the others no longer print Hazelcast's "Connection refused" WARN
 * about it; about a member that never said it was leaving, the line stays. A member connection
 * closed by a broken pipe (a member was killed) is one line, not a stack trace.
 */
class ConnectionNoticesTest {

    private static final String REFUSED = "[127.0.0.1]:5701 [llama-prod] [5.3.8] Removing connection to endpoint [127.0.0.1]:%d"
            + " Cause => java.io.IOException {Connection refused to address /127.0.0.1:%d}, Error-Count: 5";

    private final LoggerContext context = (LoggerContext) LoggerFactory.getILoggerFactory();

    @Test
    void onlyTheRefusalsOfAMemberThatSaidItWasLeavingAreDropped() {
        ConnectionNotices notices = new ConnectionNotices();
        Logger connections = context.getLogger(ConnectionNotices.ERRORS_LOGGER);
        int left = freePort();
        int crashed = freePort();
        String aboutLeft = String.format(REFUSED, left, left);
        assertThat(notices.decide(null, connections, Level.WARN, aboutLeft, null, null)).isEqualTo(FilterReply.NEUTRAL);

        Departures.leaving("127.0.0.1", left, false);
        assertThat(notices.decide(null, connections, Level.WARN, aboutLeft, null, null)).isEqualTo(FilterReply.DENY);
        assertThat(notices.decide(null, connections, Level.WARN, String.format(REFUSED, crashed, crashed), null, null))
                .as("a member that did not say it was leaving").isEqualTo(FilterReply.NEUTRAL);
        assertThat(notices.decide(null, context.getLogger("com.hazelcast.other"), Level.WARN, aboutLeft, null, null))
                .isEqualTo(FilterReply.NEUTRAL);
        assertThat(notices.decide(null, connections, Level.ERROR, aboutLeft, null, null)).isEqualTo(FilterReply.NEUTRAL);
        assertThat(notices.dropped()).isEqualTo(1);
    }

    @Test
    void theSuspicionOfAMemberThatSaidItWasLeavingIsDroppedAndOfOneThatCrashedKept() {
        ConnectionNotices notices = new ConnectionNotices();
        Logger membership = context.getLogger(ConnectionNotices.MEMBERSHIP_LOGGER);
        int left = freePort();
        int crashed = freePort();
        String suspected = "[127.0.0.1]:5703 [order] [5.3.8] Member [127.0.0.1]:%d - 355f010a-538c-4a3e-b8c1-710ad03d156a is suspected"
                + " to be dead for reason: No connection";
        Departures.leaving("127.0.0.1", left, false);
        assertThat(notices.decide(null, membership, Level.WARN, String.format(suspected, left), null, null)).isEqualTo(FilterReply.DENY);
        assertThat(notices.decide(null, membership, Level.WARN, String.format(suspected, crashed), null, null))
                .as("a member that did not say it was leaving").isEqualTo(FilterReply.NEUTRAL);
        assertThat(notices.decide(null, context.getLogger("com.hazelcast.other"), Level.WARN, String.format(suspected, left), null, null))
                .isEqualTo(FilterReply.NEUTRAL);
        assertThat(notices.dropped()).isEqualTo(1);
    }

    @Test
    void theNewMastersTakeOverIsDroppedAfterTheMasterSaidItWasLeaving() {
        ConnectionNotices notices = new ConnectionNotices();
        Logger cluster = context.getLogger(ConnectionNotices.CLUSTER_LOGGER);
        String accepted = "[127.0.0.1]:5703 [order] [5.3.8] Mastership of [127.0.0.1]:5702 is accepted. Response: MembersView{version=3,"
                + " members=[MemberInfo{address=[127.0.0.1]:5702}]}";
        Departures.leaving("127.0.0.1", freePort(), true);
        assertThat(Departures.masterSaidLeaving()).isTrue();
        assertThat(notices.decide(null, cluster, Level.WARN, accepted, null, null)).isEqualTo(FilterReply.DENY);
        assertThat(notices.decide(null, cluster, Level.WARN, "[127.0.0.1]:5703 [order] [5.3.8] Mastership claim failed", null, null))
                .isEqualTo(FilterReply.NEUTRAL);
        assertThat(notices.decide(null, context.getLogger("com.hazelcast.other"), Level.WARN, accepted, null, null))
                .isEqualTo(FilterReply.NEUTRAL);
    }

    @Test
    void whatAStoppingMemberLogsAboutItsPeersIsDroppedAndOnlyThat() {
        ConnectionNotices notices = new ConnectionNotices();
        Logger connections = context.getLogger(ConnectionNotices.ERRORS_LOGGER);
        Logger membership = context.getLogger("com.hazelcast.internal.cluster.impl.MembershipManager");
        int self = freePort();
        int peer = freePort();
        int other = freePort();
        String refused = "[127.0.0.1]:" + self + " [three] [5.3.8] Removing connection to endpoint [127.0.0.1]:" + peer
                + " Cause => java.io.IOException {Connection refused to address /127.0.0.1:" + peer + "}, Error-Count: 5";
        String suspected = "[127.0.0.1]:" + self + " [three] [5.3.8] Member [127.0.0.1]:" + peer + " - 742cdc52 is suspected to be"
                + " dead for reason: No connection";
        String othersSuspicion = suspected.replace("[127.0.0.1]:" + self + " ", "[127.0.0.1]:" + other + " ");
        assertThat(notices.decide(null, connections, Level.WARN, refused, null, null)).as("before the stop").isEqualTo(FilterReply.NEUTRAL);
        assertThat(notices.decide(null, membership, Level.WARN, suspected, null, null)).isEqualTo(FilterReply.NEUTRAL);

        Departures.stopping("127.0.0.1", self);
        assertThat(notices.decide(null, connections, Level.WARN, refused, null, null)).isEqualTo(FilterReply.DENY);
        assertThat(notices.decide(null, membership, Level.WARN, suspected, null, null)).isEqualTo(FilterReply.DENY);
        Logger migration = context.getLogger("com.hazelcast.internal.partition.impl.MigrationManager");
        String lost = "[127.0.0.1]:" + self + " [three] [5.3.8] partitionId=15 is completely lost!";
        assertThat(notices.decide(null, migration, Level.WARN, lost, null, null)).isEqualTo(FilterReply.DENY);
        assertThat(notices.decide(null, migration, Level.WARN, "[127.0.0.1]:" + self + " [three] [5.3.8] Assigning new owners for 16"
                + " LOST partitions!", null, null)).isEqualTo(FilterReply.DENY);
        assertThat(notices.decide(null, migration, Level.WARN, lost.replace("[127.0.0.1]:" + self + " ", "[127.0.0.1]:" + other + " "),
                null, null)).as("a partition lost where no member is stopping").isEqualTo(FilterReply.NEUTRAL);
        assertThat(notices.decide(null, membership, Level.WARN, othersSuspicion, null, null))
                .as("logged by another member of the process, not stopping").isEqualTo(FilterReply.NEUTRAL);
        assertThat(notices.decide(null, membership, Level.WARN, "[127.0.0.1]:" + self + " [three] [5.3.8] Merge failed", null, null))
                .as("another line of the stopping member").isEqualTo(FilterReply.NEUTRAL);
        assertThat(notices.decide(null, context.getLogger("io.kvpager.Other"), Level.WARN, suspected, null, null))
                .as("not Hazelcast's").isEqualTo(FilterReply.NEUTRAL);
        assertThat(notices.dropped()).isEqualTo(4);

        Departures.stopped("127.0.0.1", self);
        assertThat(notices.decide(null, connections, Level.WARN, refused, null, null)).as("once stopped").isEqualTo(FilterReply.NEUTRAL);
    }

    @Test
    void aMessageDiscardedByAKvpagerConsumerIsDroppedOnlyWhileANodeOfTheProcessStops() {
        AtomicBoolean stopping = new AtomicBoolean();
        ConnectionNotices notices = new ConnectionNotices(stopping::get);
        Logger consumers = context.getLogger(ConnectionNotices.CONSUMER_LOGGER);
        String discarded = "Discarding message since the consumer is not registered. address: kvpager.llama.pp0.tp1";
        assertThat(notices.decide(null, consumers, Level.WARN, discarded, null, null)).as("no node stopping").isEqualTo(FilterReply.NEUTRAL);

        stopping.set(true);
        assertThat(notices.decide(null, consumers, Level.WARN, discarded, null, null)).isEqualTo(FilterReply.DENY);
        assertThat(notices.decide(null, consumers, Level.WARN, discarded.replace("kvpager.llama", "app.orders"), null, null))
                .as("an address not kvpager's").isEqualTo(FilterReply.NEUTRAL);
        assertThat(notices.decide(null, context.getLogger("io.vertx.core.eventbus.impl.Other"), Level.WARN, discarded, null, null))
                .as("another logger").isEqualTo(FilterReply.NEUTRAL);

        stopping.set(false);
        assertThat(notices.decide(null, consumers, Level.WARN, discarded, null, null)).as("the node stopped").isEqualTo(FilterReply.NEUTRAL);
        assertThat(notices.dropped()).isEqualTo(1);
    }

    @Test
    void aConnectionClosedByABrokenPipeIsOneLine() {
        ConnectionNotices notices = new ConnectionNotices();
        notices.start();
        context.addTurboFilter(notices);
        ListAppender<ILoggingEvent> lines = new ListAppender<>();
        lines.setContext(context);
        lines.start();
        Logger connection = context.getLogger(ConnectionNotices.CONNECTION_LOGGER);
        connection.addAppender(lines);
        try {
            // as a worker logged it when its coordinator was killed (SIGKILL)
            String closed = "[127.0.0.1]:32903 [kvpager-death] [5.3.8] Connection[id=7, /127.0.0.1:48405->/127.0.0.1:41275, qualifier=null,"
                    + " endpoint=[127.0.0.1]:41275, remoteUuid=null, alive=false, connectionType=NONE, planeIndex=-1] closed. Reason:"
                    + " Exception in Connection[id=7, /127.0.0.1:48405->/127.0.0.1:41275, alive=true], thread=hz.epic_euler.IO.thread-out-0";
            connection.warn(closed, new IOException("Broken pipe"));
            connection.warn("[127.0.0.1]:32903 [kvpager-death] [5.3.8] something else", new IOException("kept"));
            assertThat(lines.list).hasSize(2);
            ILoggingEvent shortened = lines.list.getFirst();
            assertThat(shortened.getThrowableProxy()).isNull();
            assertThat(shortened.getLevel()).isEqualTo(Level.WARN);
            assertThat(shortened.getFormattedMessage()).isEqualTo(closed + ": java.io.IOException: Broken pipe");
            assertThat(lines.list.get(1).getThrowableProxy()).as("another line keeps its stack trace").isNotNull();
            assertThat(notices.shortened()).isEqualTo(1);
        } finally {
            connection.detachAppender(lines);
            context.getTurboFilterList().remove(notices);
        }
    }

    @Test
    void aCleanStopLeavesNoConnectionRefusedLineOnTheOtherNode() throws Exception {
        ConnectionNotices notices = new ConnectionNotices();
        notices.start();
        context.addTurboFilter(notices);
        ListAppender<ILoggingEvent> lines = new ListAppender<>();
        lines.setContext(context);
        lines.start();
        Logger connections = context.getLogger(ConnectionNotices.ERRORS_LOGGER);
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
