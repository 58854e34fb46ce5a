package io.kvpager.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Path;
import java.util.Map;
import java.util.UUID;
import javax.net.ssl.SSLContext;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The client's TLS context begun before the command line is parsed: which arguments begin one,
 * and that a command takes it only for exactly the stores and passwords it parsed, otherwise
 * building its own and meeting its own error.
 */
class EarlyClientTlsTest {

    private static final String PASSWORD = "test-only-" + UUID.randomUUID();
    private static final Map<String, String> ENV = Map.of(ClusterOptions.KEY_STORE_PASSWORD, PASSWORD);

    @TempDir
    static Path dir;
    private static String keys;

    @BeforeAll
    static void makeStore() throws Exception {
        keys = dir.resolve("cluster.p12").toString();
        AdminTlsTest.keytool("-J-Dkeystore.pkcs12.certProtectionAlgorithm=NONE", "-genkeypair", "-alias", "node", "-keyalg", "EC",
                "-groupname", "secp256r1", "-dname", "CN=kvpager-test", "-validity", "2", "-storetype", "PKCS12", "-keystore", keys,
                "-storepass", PASSWORD, "-keypass", PASSWORD);
    }

    @AfterEach
    void forget() {
        EarlyClientTls.forget();
    }

    @Test
    void onlyAClientCommandWithAKeyStoreAndItsPasswordBeginsOne() {
        EarlyClientTls.Stores own = new EarlyClientTls.Stores("k.p12", PASSWORD, "k.p12", PASSWORD);
        assertThat(EarlyClientTls.stores(new String[] {"status", "--cluster", "--tls-key-store", "k.p12"}, ENV)).isEqualTo(own);
        assertThat(EarlyClientTls.stores(new String[] {"limit", "llama", "40GiB", "--cluster", "--tls-key-store=k.p12"}, ENV)).isEqualTo(own);
        assertThat(EarlyClientTls.stores(new String[] {"top", "--tls-key-store", "a.p12", "--tls-key-store", "k.p12"}, ENV))
                .as("the last one given, as picocli would refuse or take it").isEqualTo(own);
        assertThat(EarlyClientTls.stores(new String[] {"worker", "--tls-key-store", "k.p12"}, ENV)).as("a member").isNull();
        assertThat(EarlyClientTls.stores(new String[] {"status", "--cluster"}, ENV)).as("plain HTTP").isNull();
        assertThat(EarlyClientTls.stores(new String[] {"status", "--tls-key-store", "k.p12"}, Map.of())).as("no password").isNull();
        assertThat(EarlyClientTls.stores(new String[] {"status", "--tls-key-store"}, ENV)).as("no value").isNull();
        assertThat(EarlyClientTls.stores(new String[] {"status", "--tls-key-store", "k.p12", "--tls-trust-store", "t.p12"}, ENV))
                .as("a trust store without its password").isNull();
        Map<String, String> both = Map.of(ClusterOptions.KEY_STORE_PASSWORD, PASSWORD, ClusterOptions.TRUST_STORE_PASSWORD, "other");
        assertThat(EarlyClientTls.stores(new String[] {"status", "--tls-key-store", "k.p12", "--tls-trust-store", "t.p12"}, both))
                .isEqualTo(new EarlyClientTls.Stores("k.p12", PASSWORD, "t.p12", "other"));
        assertThat(EarlyClientTls.stores(new String[0], ENV)).isNull();
    }

    @Test
    void theCommandTakesTheContextBegunForExactlyItsStores() {
        EarlyClientTls.begin(new String[] {"status", "--cluster", "--tls-key-store", keys}, ENV);
        SSLContext begun = EarlyClientTls.take(new EarlyClientTls.Stores(keys, PASSWORD, keys, PASSWORD));
        assertThat(begun).isNotNull();
        assertThat(EndpointTls.clientContext(keys, PASSWORD, keys, PASSWORD)).as("the same context, not built again").isSameAs(begun);
        assertThat(EarlyClientTls.take(new EarlyClientTls.Stores(keys, PASSWORD + "x", keys, PASSWORD + "x"))).isNull();
        assertThat(EarlyClientTls.take(new EarlyClientTls.Stores(dir.resolve("other.p12").toString(), PASSWORD, keys, PASSWORD))).isNull();
    }

    @Test
    void aStoreThatDoesNotReadLeavesTheErrorToTheCommand() {
        Map<String, String> wrong = Map.of(ClusterOptions.KEY_STORE_PASSWORD, "not-the-password");
        EarlyClientTls.begin(new String[] {"status", "--tls-key-store", keys}, wrong);
        assertThat(EarlyClientTls.take(new EarlyClientTls.Stores(keys, "not-the-password", keys, "not-the-password"))).isNull();
        assertThatThrownBy(() -> EndpointTls.clientContext(keys, "not-the-password", keys, "not-the-password"))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("--tls-key-store: cannot read " + keys + " with its password");
    }
}
