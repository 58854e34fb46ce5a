package io.kvpager.cluster;

import io.kvpager.impl.broker.GpuBroker;

import com.hazelcast.config.Config;
import com.hazelcast.config.JoinConfig;
import com.hazelcast.config.SplitBrainProtectionConfig;
import com.hazelcast.splitbrainprotection.SplitBrainProtectionOn;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** The packaged {@code config/cluster.xml}, as a node reads it and with its options on top. */
class MemberConfigTest {

    @Test
    void thePackagedConfigIsConfigClusterXml() throws IOException {
        try (var packaged = MemberConfig.class.getResourceAsStream(MemberConfig.PACKAGED)) {
            assertThat(packaged).isNotNull();
            assertThat(new String(packaged.readAllBytes())).isEqualTo(Files.readString(Path.of("..", "config", "cluster.xml")));
        }
    }

    @Test
    void joinsByTcpIpOnLoopbackAtOnceWithoutMulticast() {
        Config config = MemberConfig.of(new ClusterNodeOptions(), "kvpager");
        JoinConfig join = config.getNetworkConfig().getJoin();
        assertThat(join.getMulticastConfig().isEnabled()).isFalse();
        assertThat(join.getAutoDetectionConfig().isEnabled()).isFalse();
        assertThat(join.getTcpIpConfig().isEnabled()).isTrue();
        assertThat(join.getTcpIpConfig().getMembers()).containsExactly("127.0.0.1");
        assertThat(config.getNetworkConfig().getInterfaces().isEnabled()).isTrue();
        assertThat(config.getNetworkConfig().getInterfaces().getInterfaces()).containsExactly("127.0.0.1");
        assertThat(config.getProperty("hazelcast.wait.seconds.before.join")).isEqualTo("0");
        assertThat(config.getProperty("hazelcast.logging.type")).isEqualTo("slf4j");
        assertThat(config.getProperty("hazelcast.phone.home.enabled")).isEqualTo("false");
        assertThat(config.getMultiMapConfig("__vertx.subs").getBackupCount()).isEqualTo(1);
    }

    @Test
    void theGpuBudgetRecordsSurviveTwoMembersDyingAtOnce() {
        Config config = MemberConfig.of(new ClusterNodeOptions(), "kvpager");
        // by the names the brokers use, so that a renamed map cannot fall back to Hazelcast's one backup unseen
        for (String map : List.of(GpuBroker.SHARES, GpuBroker.CAPACITIES)) {
            assertThat(config.getMapConfig(map).getBackupCount()).as(map).isEqualTo(2);
        }
    }

    @Test
    void theNodesOptionsGoOnTop() {
        ClusterNodeOptions options = new ClusterNodeOptions().setHost("10.1.2.3").setMemberPort(5901)
                .setMembers(List.of("10.1.2.4:5901", "10.1.2.5"));
        Config config = MemberConfig.of(options, "llama-prod");
        assertThat(config.getClusterName()).isEqualTo("llama-prod");
        assertThat(config.getNetworkConfig().getPort()).isEqualTo(5901);
        assertThat(config.getNetworkConfig().isPortAutoIncrement()).isTrue();
        assertThat(config.getNetworkConfig().getInterfaces().getInterfaces()).containsExactly("10.1.2.3");
        assertThat(config.getNetworkConfig().getJoin().getTcpIpConfig().getMembers()).containsExactly("10.1.2.4:5901", "10.1.2.5");
    }

    @Test
    void withoutAQuorumNothingIsProtectedSoThatOneNodeIsACluster() {
        Config config = MemberConfig.of(new ClusterNodeOptions(), "kvpager");
        assertThat(config.getSplitBrainProtectionConfigs()).isEmpty();
        for (String book : MemberConfig.PROTECTED_BOOKS) {
            assertThat(config.getMapConfig(book).getSplitBrainProtectionName()).as(book).isNull();
        }
    }

    @Test
    void aQuorumProtectsTheWritesOfEveryBook() {
        Config config = MemberConfig.of(new ClusterNodeOptions().setQuorum(3), "kvpager");
        SplitBrainProtectionConfig protection = config.getSplitBrainProtectionConfig(MemberConfig.BOOKS_QUORUM);
        assertThat(protection.isEnabled()).isTrue();
        assertThat(protection.getMinimumClusterSize()).isEqualTo(3);
        assertThat(protection.getProtectOn()).isEqualTo(SplitBrainProtectionOn.WRITE);
        // by the names the brokers, the directory and the limits use
        assertThat(MemberConfig.PROTECTED_BOOKS).contains(GpuBroker.SHARES, GpuBroker.CAPACITIES, ClusterDirectory.INSTANCES,
                ClusterDirectory.WORKERS, "kvpager.limits");
        for (String book : MemberConfig.PROTECTED_BOOKS) {
            assertThat(config.getMapConfig(book).getSplitBrainProtectionName()).as(book).isEqualTo(MemberConfig.BOOKS_QUORUM);
        }
        // the file's settings of a protected map stay
        assertThat(config.getMapConfig(GpuBroker.SHARES).getBackupCount()).isEqualTo(2);
        assertThat(config.getMapConfig("__vertx.nodeInfo").getSplitBrainProtectionName()).isNull();
    }

    @Test
    void aConfigFileOfItsOwnReplacesThePackagedOne(@TempDir Path dir) throws IOException {
        Path file = dir.resolve("mine.xml");
        Files.writeString(file, """
                <hazelcast xmlns="http://www.hazelcast.com/schema/config">
                  <properties><property name="hazelcast.max.no.heartbeat.seconds">42</property></properties>
                  <network><join><multicast enabled="false"/><tcp-ip enabled="true"><member>10.9.9.9</member></tcp-ip></join></network>
                </hazelcast>
                """);
        Config config = MemberConfig.of(new ClusterNodeOptions().setConfig(file.toString()).setMembers(List.of("10.9.9.8")), "x");
        assertThat(config.getProperty("hazelcast.max.no.heartbeat.seconds")).isEqualTo("42");
        assertThat(config.getNetworkConfig().getJoin().getTcpIpConfig().getMembers()).containsExactly("10.9.9.8");
    }

    @Test
    void aConfigThatCannotBeReadIsRefusedNamingIt(@TempDir Path dir) throws IOException {
        assertThatThrownBy(() -> MemberConfig.of(new ClusterNodeOptions().setConfig(dir.resolve("missing.xml").toString()), "x"))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("missing.xml");
        Path junk = dir.resolve("junk.xml");
        Files.writeString(junk, "<not-hazelcast/>");
        assertThatThrownBy(() -> MemberConfig.of(new ClusterNodeOptions().setConfig(junk.toString()), "x"))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("junk.xml is not a Hazelcast config");
    }
}
