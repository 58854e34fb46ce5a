package io.kvpager.cli;

import static org.assertj.core.api.Assertions.assertThat;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.LoggerContext;
import ch.qos.logback.core.spi.FilterReply;
import org.junit.jupiter.api.Test;

/** Hazelcast's occupied-ports notice of an ordinary start is dropped; every other line of that logger passes. */
class MemberPortNoticeTest {

    private final LoggerContext context = new LoggerContext();
    private final MemberPortNotice notice = new MemberPortNotice();

    @Test
    void theOccupiedPortsNoticeIsDropped() {
        assertThat(notice.decide(null, context.getLogger(MemberPortNotice.LOGGER), Level.WARN,
                "[127.0.0.1]:5703 [llama-prod] [5.3.8] Config seed port is 5701 and cluster size is 1. Some of the ports seem occupied!",
                null, null)).isEqualTo(FilterReply.DENY);
    }

    @Test
    void otherWarningsOfTheMemberAndOtherLoggersPass() {
        assertThat(notice.decide(null, context.getLogger(MemberPortNotice.LOGGER), Level.WARN, "Node is already shutting down",
                null, null)).isEqualTo(FilterReply.NEUTRAL);
        assertThat(notice.decide(null, context.getLogger(MemberPortNotice.LOGGER), Level.ERROR,
                "Some of the ports seem occupied!", null, null)).isEqualTo(FilterReply.NEUTRAL);
        assertThat(notice.decide(null, context.getLogger("io.kvpager.Other"), Level.WARN, "Some of the ports seem occupied!",
                null, null)).isEqualTo(FilterReply.NEUTRAL);
    }

    @Test
    void thePackagedLoggingConfigInstallsIt() throws Exception {
        String packaged = new String(MemberPortNoticeTest.class.getResourceAsStream("/logback.xml").readAllBytes());
        assertThat(packaged).contains("<turboFilter class=\"" + MemberPortNotice.class.getName() + "\"/>");
    }
}
