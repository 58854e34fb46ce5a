package io.kvpager.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Path;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import javax.net.ssl.SSLContext;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * The client TLS context built from {@code main} before the arguments are parsed: started only for
 * a client command with a key store and its password, taken only for exactly the stores it was
 * built from, failing as the command's own build would, and its in-memory handshake completing only
 * when the trust store vouches for the key store's certificate.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class EarlyClientTlsTest {

    private static final String PASSWORD = "test-only-" + UUID.randomUUID();
    private static final Map<String, String> ENV = Map.of(ClusterOptions.KEY_STORE_PASSWORD, PASSWORD,
            ClusterOptions.TRUST_STORE_PASSWORD, PASSWORD);

    @TempDir
    static Path dir;
    private static String keys;
    private static String rogueKeys;

    @BeforeAll
    static void stores() throws Exception {
        keys = dir.resolve("cluster.p12").toString();
        rogueKeys = dir.resolve("rogue.p12").toString();
        TestKeyStores.ed25519(keys, "kvpager-test", PASSWORD);
        TestKeyStores.p256(rogueKeys, "kvpager-rogue", PASSWORD);
    }

    @Test
    void startsOnlyForAClientCommandWithAKeyStoreAndItsPassword() {
        assertThat(EarlyClientTls.start(new String[0], ENV)).isNull();
        assertThat(EarlyClientTls.start(new String[] {"worker", "--tls-key-store", keys}, ENV)).isNull();
        assertThat(EarlyClientTls.start(new String[] {"demo"}, ENV)).isNull();
        assertThat(EarlyClientTls.start(new String[] {"status", "--cluster"}, ENV)).isNull();
        // a flag after "--" is no flag; a flag without its value is picocli's to refuse
        assertThat(EarlyClientTls.start(new String[] {"limit", "--", "--tls-key-store", keys}, ENV)).isNull();
        assertThat(EarlyClientTls.start(new String[] {"status", "--tls-key-store"}, ENV)).isNull();
        assertThat(EarlyClientTls.start(new String[] {"status", "--tls-key-store", keys}, Map.of())).isNull();
        assertThat(EarlyClientTls.start(new String[] {"status", "--tls-key-store", keys, "--tls-trust-store", keys},
                Map.of(ClusterOptions.KEY_STORE_PASSWORD, PASSWORD))).isNull();
    }

    @Test
    void isTakenOnlyForTheStoresItWasBuiltFrom() {
        EarlyClientTls early = EarlyClientTls.start(new String[] {"top", "--cluster", "--tls-key-store", keys, "--frames", "1"}, ENV);
        assertThat(early).isNotNull();
        assertThat(early.take(keys, keys)).isNull();
        assertThat(early.take(rogueKeys, null)).isNull();
        SSLContext context = early.take(keys, null);
        assertThat(context).isNotNull();
        assertThat(EarlyClientTls.rehearse(context)).as("a handshake with the store's own key and certificate").isTrue();

        EarlyClientTls both = EarlyClientTls.start(new String[] {"status", "--tls-key-store=" + keys, "--tls-trust-store", keys}, ENV);
        assertThat(both).isNotNull();
        assertThat(both.take(keys, null)).isNull();
        assertThat(both.take(keys, keys)).isNotNull();
    }

    @Test
    void aStoreThatDoesNotReadFailsAsTheCommandsOwnBuildWould() {
        Map<String, String> wrong = Map.of(ClusterOptions.KEY_STORE_PASSWORD, "not-" + PASSWORD);
        String expected = null;
        try {
            ClusterOptions.clientTls(keys, null, wrong);
        } catch (IllegalArgumentException e) {
            expected = e.getMessage();
        }
        assertThat(expected).contains("--tls-key-store").contains(keys);
        EarlyClientTls early = EarlyClientTls.start(new String[] {"status", "--tls-key-store", keys}, wrong);
        assertThatThrownBy(() -> early.take(keys, null)).isInstanceOf(IllegalArgumentException.class).hasMessage(expected);

        EarlyClientTls missing = EarlyClientTls.start(new String[] {"limit", "i", "1GiB", "--tls-key-store", keys + ".gone"}, ENV);
        assertThatThrownBy(() -> missing.take(keys + ".gone", null)).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("--tls-key-store: cannot read " + keys + ".gone");
    }

    @Test
    void theRehearsalFailsWhenTheTrustStoreDoesNotVouchForTheKey() {
        SSLContext stranger = EndpointTls.clientContext(rogueKeys, PASSWORD, keys, PASSWORD);
        assertThat(EarlyClientTls.rehearse(stranger)).isFalse();
        assertThat(EarlyClientTls.rehearse(EndpointTls.clientContext(rogueKeys, PASSWORD, rogueKeys, PASSWORD))).isTrue();
    }

}
