package io.kvpager.cluster;

import com.hazelcast.config.Config;
import com.hazelcast.config.JoinConfig;
import com.hazelcast.config.NetworkConfig;
import com.hazelcast.config.SplitBrainProtectionConfig;
import com.hazelcast.splitbrainprotection.SplitBrainProtectionOn;
import com.hazelcast.config.TcpIpConfig;
import com.hazelcast.config.XmlConfigBuilder;
import io.kvpager.impl.broker.GpuBroker;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

/**
 * The Hazelcast member config of a node: {@code config/cluster.xml} (packaged as
 * {@value #PACKAGED}) or the file the options name, with the node's own settings on top: cluster
 * name, the interface it binds, its member port, the members to join when the join is TCP-IP, no
 * Hazelcast shutdown hook (the node leaves by itself), and with a quorum above 1 the split-brain
 * protection of the books. Nothing else of the file is changed.
 */
final class MemberConfig {

    /** The packaged copy of {@code config/cluster.xml}. */
    static final String PACKAGED = "/io/kvpager/cluster/cluster.xml";
    static final String SHUTDOWN_HOOK = "hazelcast.shutdownhook.enabled";
    /** The split-brain protection the books are written under when the node's quorum is above 1. */
    static final String BOOKS_QUORUM = "kvpager.books-quorum";
    /** The instances' last limits (the coordinator's {@code InstanceLimits}, package-private there). */
    static final String LIMITS = "kvpager.limits";
    /**
     * The records a smaller side of a split must not write: what it would grant or free there the
     * larger side does not see, and the merge would then pick one side's record over the other's.
     */
    static final List<String> PROTECTED_BOOKS = List.of(GpuBroker.SHARES, GpuBroker.CAPACITIES, ClusterDirectory.INSTANCES,
            ClusterDirectory.WORKERS, LIMITS);

    private MemberConfig() {
    }

    /**
     * The config for {@code options}, under cluster name {@code clusterName} (the options' name,
     * with TLS suffixed by the certificate's fingerprint).
     *
     * @throws IllegalArgumentException when the file cannot be read or is not a Hazelcast config
     */
    static Config of(ClusterNodeOptions options, String clusterName) {
        Config config = load(options.getConfig());
        config.setClusterName(clusterName);
        // The node leaves the cluster itself when the JVM stops (gracefully, after its workers
        // have stopped): Hazelcast's own hook would terminate the member at the same time,
        // which the others take for a crash and notice only after their failure detector.
        config.setProperty(SHUTDOWN_HOOK, "false");
        NetworkConfig network = config.getNetworkConfig();
        network.setPort(options.getMemberPort());
        network.getInterfaces().setEnabled(true).clear().addInterface(options.getHost());
        JoinConfig join = network.getJoin();
        TcpIpConfig tcpIp = join.getTcpIpConfig();
        if (tcpIp.isEnabled()) {
            tcpIp.setMembers(options.getMembers());
        }
        if (options.getQuorum() > 1) {
            // writes only: a smaller side may still read what it last saw, e.g. for status
            config.addSplitBrainProtectionConfig(new SplitBrainProtectionConfig(BOOKS_QUORUM, true, options.getQuorum())
                    .setProtectOn(SplitBrainProtectionOn.WRITE));
            for (String book : PROTECTED_BOOKS) {
                config.getMapConfig(book).setSplitBrainProtectionName(BOOKS_QUORUM);
            }
        }
        return config;
    }

    private static Config load(String path) {
        if (path == null) {
            try (InputStream in = MemberConfig.class.getResourceAsStream(PACKAGED)) {
                if (in == null) {
                    throw new IllegalStateException(PACKAGED + " is missing from the kvpager-cluster jar");
                }
                return new XmlConfigBuilder(in).build();
            } catch (IOException e) {
                throw new UncheckedIOException("reading " + PACKAGED, e);
            }
        }
        Path file = Path.of(path);
        if (!Files.isReadable(file)) {
            throw new IllegalArgumentException("config: cannot read the Hazelcast config file " + file.toAbsolutePath());
        }
        try (InputStream in = Files.newInputStream(file)) {
            return new XmlConfigBuilder(in).build();
        } catch (IOException e) {
            throw new IllegalArgumentException("config: cannot read " + file.toAbsolutePath() + ": " + e.getMessage(), e);
        } catch (RuntimeException e) {
            throw new IllegalArgumentException("config: " + file.toAbsolutePath() + " is not a Hazelcast config: " + e.getMessage(), e);
        }
    }
}
