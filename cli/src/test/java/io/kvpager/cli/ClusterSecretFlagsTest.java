package io.kvpager.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.kvpager.cluster.ClusterNodeOptions;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The cluster secret's flags and the refusal of a plain-HTTP endpoint on a host other machines reach. */
class ClusterSecretFlagsTest {

    private static final Map<String, String> PASSWORD = Map.of(ClusterOptions.KEY_STORE_PASSWORD, "store-password");

    @TempDir
    Path dir;

    private static ClusterOptions flags() {
        ClusterOptions options = new ClusterOptions();
        options.name = "llama-prod";
        options.host = "127.0.0.1";
        options.memberPort = 5701;
        return options;
    }

    @Test
    void tlsWithoutASecretIsRefusedSayingWhy() {
        ClusterOptions options = flags();
        options.keyStore = "cluster.p12";
        assertThatThrownBy(() -> options.nodeOptions(PASSWORD)).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("--tls-key-store needs the cluster secret, in --cluster-secret-file or $KVPAGER_CLUSTER_SECRET")
                .hasMessageContaining("every node hands its certificate to anyone");
    }

    @Test
    void theSecretComesFromItsFileBeforeTheVariableAndMustBeLongEnough() throws Exception {
        ClusterOptions options = flags();
        options.keyStore = "cluster.p12";
        Path file = dir.resolve("secret");
        Files.writeString(file, "  from-the-file-0123456789\n");
        options.secretFile = file.toString();
        ClusterNodeOptions node = options.nodeOptions(Map.of(ClusterOptions.KEY_STORE_PASSWORD, "p",
                ClusterOptions.CLUSTER_SECRET, "from-the-variable-0123456789"));
        assertThat(node.getClusterSecret()).isEqualTo("  from-the-file-0123456789\n");
        assertThat(node.toString()).doesNotContain("from-the-file");

        ClusterOptions fromVariable = flags();
        assertThat(fromVariable.nodeOptions(Map.of(ClusterOptions.CLUSTER_SECRET, "from-the-variable-0123456789")).getClusterSecret())
                .isEqualTo("from-the-variable-0123456789");

        Files.writeString(file, "short");
        assertThatThrownBy(() -> options.nodeOptions(PASSWORD)).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("--cluster-secret-file: the cluster secret must be at least 16 bytes, got 5");
        options.secretFile = dir.resolve("missing").toString();
        assertThatThrownBy(() -> options.nodeOptions(PASSWORD)).hasMessageContaining("--cluster-secret-file: cannot read");
    }

    @Test
    void aPlainEndpointOnAHostOthersReachIsRefusedUnlessAskedFor() {
        CommandLineTest.Run run = CommandLineTest.run("worker", "--instance", "a", "--tp", "0", "--cluster-name", "test",
                "--cluster-host", "10.11.12.13");
        assertThat(run.exitCode()).isEqualTo(2);
        assertThat(run.err()).contains("--cluster-host 10.11.12.13 is not loopback and TLS is off")
                .contains("/cluster/limit over plain HTTP").contains("--admin-without-tls");

        NodeEndpointOption endpoint = new NodeEndpointOption();
        endpoint.port = "9464";
        ClusterNodeOptions exposed = new ClusterNodeOptions().setHost("10.11.12.13");
        assertThatThrownBy(() -> endpoint.checkExposure(exposed)).hasMessageContaining("is not loopback and TLS is off");
        endpoint.checkExposure(new ClusterNodeOptions().setHost("127.0.0.1"));
        endpoint.checkExposure(new ClusterNodeOptions().setHost("::1"));
        endpoint.withoutTls = true;
        endpoint.checkExposure(exposed);
        endpoint.withoutTls = false;
        endpoint.port = "off";
        endpoint.checkExposure(exposed);
    }
}
