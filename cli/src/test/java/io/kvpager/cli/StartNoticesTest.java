package io.kvpager.cli;

import static org.assertj.core.api.Assertions.assertThat;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.LoggerContext;
import ch.qos.logback.core.spi.FilterReply;
import io.kvpager.cluster.ClusterNodeOptions;
import java.net.BindException;
import org.junit.jupiter.api.Test;

/**
 * Hazelcast's occupied-ports notice of an ordinary start and Vert.x's stack trace of an event-bus
 * port in use are dropped, every other line of those loggers passes, and the port in use is one
 * line that names the port and its flag.
 */
class StartNoticesTest {

    private final LoggerContext context = new LoggerContext();
    private final StartNotices notices = new StartNotices();

    @Test
    void theOccupiedPortsNoticeIsDropped() {
        assertThat(notices.decide(null, context.getLogger(StartNotices.MEMBER_LOGGER), Level.WARN,
                "[127.0.0.1]:5703 [llama-prod] [5.3.8] Config seed port is 5701 and cluster size is 1. Some of the ports seem occupied!",
                null, null)).isEqualTo(FilterReply.DENY);
    }

    @Test
    void thePartitionTableLinesOfNodesStartingAtOnceAreDroppedAndOtherPartitionWarningsPass() {
        var partitions = context.getLogger(StartNotices.PARTITION_LOGGER);
        // as the first of three launchers started together printed them
        assertThat(notices.decide(null, partitions, Level.WARN, "[127.0.0.1]:5702 [three-31139] [5.3.8] Ignoring received partition table,"
                + " startup is not completed yet. Sender: [127.0.0.1]:5701", null, null)).isEqualTo(FilterReply.DENY);
        assertThat(notices.decide(null, partitions, Level.WARN, "[127.0.0.1]:5702 [three-31139] [5.3.8] Following unknown addresses are"
                + " found in partition table sent from master[[127.0.0.1]:5702]. (Probably they have recently joined or left the cluster.)"
                + " {\n\t[127.0.0.1]:5703 - 8d2f6c1e\n}", null, null)).isEqualTo(FilterReply.DENY);
        assertThat(notices.decide(null, partitions, Level.WARN, "[127.0.0.1]:5702 [three-31139] [5.3.8] Partition lost", null, null))
                .isEqualTo(FilterReply.NEUTRAL);
        assertThat(notices.decide(null, context.getLogger("com.hazelcast.other"), Level.WARN,
                "Ignoring received partition table, startup is not completed yet", null, null)).isEqualTo(FilterReply.NEUTRAL);
    }

    @Test
    void aBindFailuresStackTraceIsDroppedAndOtherStartFailuresPass() {
        RuntimeException bind = new RuntimeException(new BindException("Address already in use"));
        assertThat(notices.decide(null, context.getLogger(StartNotices.VERTX_LOGGER), Level.ERROR,
                "Failed to initialize clustered Vert.x", null, bind)).isEqualTo(FilterReply.DENY);
        assertThat(notices.decide(null, context.getLogger(StartNotices.VERTX_LOGGER), Level.ERROR,
                "Failed to initialize clustered Vert.x", null, new IllegalStateException("join refused"))).isEqualTo(FilterReply.NEUTRAL);
    }

    @Test
    void otherWarningsOfTheMemberAndOtherLoggersPass() {
        assertThat(notices.decide(null, context.getLogger(StartNotices.MEMBER_LOGGER), Level.WARN, "Node is already shutting down",
                null, null)).isEqualTo(FilterReply.NEUTRAL);
        assertThat(notices.decide(null, context.getLogger(StartNotices.MEMBER_LOGGER), Level.ERROR,
                "Some of the ports seem occupied!", null, null)).isEqualTo(FilterReply.NEUTRAL);
        assertThat(notices.decide(null, context.getLogger("io.kvpager.Other"), Level.WARN, "Some of the ports seem occupied!",
                null, null)).isEqualTo(FilterReply.NEUTRAL);
    }

    @Test
    void thePackagedLoggingConfigInstallsIt() throws Exception {
        String packaged = new String(StartNoticesTest.class.getResourceAsStream("/logback.xml").readAllBytes());
        assertThat(packaged).contains("<turboFilter class=\"" + StartNotices.class.getName() + "\"/>");
    }

    @Test
    void anEventBusPortInUseIsOneLineNamingThePortAndTheFlag() {
        ClusterNodeOptions options = new ClusterNodeOptions().setHost("127.0.0.1").setPort(47123);
        RuntimeException failed = Node.portInUse(options, new RuntimeException(new BindException("Address already in use")));
        assertThat(failed.getMessage()).isEqualTo("--cluster-port 47123 on 127.0.0.1 is in use (the event bus binds it): choose a free"
                + " port, or 0 for any");
        IllegalStateException other = new IllegalStateException("join refused");
        assertThat(Node.portInUse(options, other)).isSameAs(other);
    }
}
