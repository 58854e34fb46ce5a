package io.kvpager.cli;

import static org.assertj.core.api.Assertions.assertThat;

import io.kvpager.LimitResult;
import io.kvpager.cache.KvCache;
import io.kvpager.cache.KvCacheOptions;
import io.kvpager.cli.metrics.MetricsEndpoint;
import io.kvpager.cli.status.ClusterAdmin;
import io.kvpager.cli.status.ClusterClient;
import io.kvpager.cli.status.ClusterStatus;
import io.kvpager.cluster.ClusterNode;
import io.kvpager.cluster.ClusterNodeOptions;
import io.kvpager.sim.SimOptions;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.net.HttpURLConnection;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.security.KeyStore;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import javax.net.ssl.HttpsURLConnection;
import javax.net.ssl.SSLContext;
import javax.net.ssl.TrustManagerFactory;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;

/**
 * A TLS node's endpoint against clients as an attacker would try them: without a client
 * certificate {@code /metrics} and {@code /health} answer, {@code /cluster/*} is refused (401) and
 * no limit changes; plain HTTP gets nothing; a certificate the node does not trust gets nothing;
 * with the cluster's certificate, hostile bodies to {@code /cluster/limit} are refused and change
 * nothing, and a good one changes the limit.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class AdminTlsTest {

    private static final String PASSWORD = "test-only-" + UUID.randomUUID();
    private static final String INSTANCE = "admin-tls";

    @TempDir
    static Path dir;
    private static String keys;
    private static String rogueKeys;
    private static ClusterNode node;
    private static KvCache cache;
    private static MetricsEndpoint endpoint;
    private static String clusterName;

    @BeforeAll
    static void start() throws Exception {
        keys = dir.resolve("cluster.p12").toString();
        rogueKeys = dir.resolve("rogue.p12").toString();
        TestKeyStores.p256(keys, "kvpager-test", PASSWORD);
        TestKeyStores.p256(rogueKeys, "kvpager-rogue", PASSWORD);
        clusterName = "kvpager-admin-" + UUID.randomUUID().toString().substring(0, 8);
        int memberPort = freePort();
        ClusterNodeOptions options = new ClusterNodeOptions().setClusterName(clusterName).setHost("127.0.0.1").setMemberPort(memberPort)
                .setMembers(List.of("127.0.0.1:" + memberPort)).setKeyStore(keys).setKeyStorePassword(PASSWORD)
                .setClusterSecret("test-secret-" + UUID.randomUUID());
        node = ClusterNode.start(options, MetricsEndpoint.metricsOptions()).await(60, TimeUnit.SECONDS);
        cache = node.deployCache(new KvCacheOptions().setInstance(INSTANCE).setTp(1).setLayers(2).setBlockBytes(64 << 10)
                .setPages(16).setLocalWorkers(true).setDevice("sim")
                .setSim(SimOptions.defaults().withCapacityBytes(1L << 30).withGpuKey(INSTANCE + "-" + UUID.randomUUID()))).await(60, TimeUnit.SECONDS);
        endpoint = MetricsEndpoint.listen(node.vertx(), "127.0.0.1", 0, 1, List.of(cache), new ClusterAdmin(node.vertx(), clusterName, 5000),
                EndpointTls.serverOptions(options));
    }

    @AfterAll
    static void stop() throws Exception {
        if (endpoint != null) {
            endpoint.close();
        }
        if (node != null) {
            node.close().await(60, TimeUnit.SECONDS);
        }
    }

    @Test
    void withoutAClientCertificateOnlyMetricsAndHealthAnswer() throws Exception {
        int before = limitPages();
        SSLContext noKey = trustOnly();
        assertThat(send(noKey, "/metrics", null).status()).isEqualTo(200);
        assertThat(send(noKey, "/health", null).status()).isIn(200, 503);
        Answer status = send(noKey, "/cluster/status?cluster=" + clusterName, null);
        assertThat(status.status()).isEqualTo(401);
        assertThat(status.body()).contains("client certificate").doesNotContain(INSTANCE);
        Answer limit = send(noKey, "/cluster/limit?cluster=" + clusterName, "{\"instance\":\"" + INSTANCE + "\",\"bytes\":2097152}");
        assertThat(limit.status()).isEqualTo(401);
        assertThat(limitPages()).isEqualTo(before);

        // plain HTTP on the HTTPS port: no answer at all
        HttpURLConnection plain = (HttpURLConnection) URI.create("http://127.0.0.1:" + endpoint.port() + "/cluster/status").toURL().openConnection();
        plain.setConnectTimeout(2000);
        plain.setReadTimeout(2000);
        int plainStatus;
        try {
            plainStatus = plain.getResponseCode();
        } catch (IOException refused) {
            plainStatus = -1;
        }
        assertThat(plainStatus).isNotEqualTo(200);

        // a certificate the node's trust store does not vouch for ends the handshake
        SSLContext rogue = EndpointTls.clientContext(rogueKeys, PASSWORD, keys, PASSWORD);
        int rogueStatus;
        try {
            rogueStatus = send(rogue, "/cluster/limit?cluster=" + clusterName, "{\"instance\":\"" + INSTANCE + "\",\"bytes\":2097152}").status();
        } catch (IOException refused) {
            rogueStatus = -1;
        }
        assertThat(rogueStatus).as("no answer to a certificate the node does not trust").isIn(-1, 401);
        assertThat(limitPages()).isEqualTo(before);
    }

    @Test
    void withTheClustersCertificateHostileBodiesChangeNothingAndAGoodOneChangesTheLimit() throws Exception {
        SSLContext cluster = EndpointTls.clientContext(keys, PASSWORD, keys, PASSWORD);
        int before = limitPages();
        List<String> hostile = new ArrayList<>(List.of("", "null", "[]", "{}", "not json", "{\"instance\":\"" + INSTANCE + "\"}",
                "{\"bytes\":2097152}", "{\"instance\":7,\"bytes\":2097152}", "{\"instance\":\"" + INSTANCE + "\",\"bytes\":\"2097152\"}",
                "{\"instance\":\"" + INSTANCE + "\",\"bytes\":-1}", "{\"instance\":\"" + INSTANCE + "\",\"bytes\":2097152,\"revision\":\"1\"}",
                "{\"instance\":\"" + INSTANCE + "\",\"bytes\":2097152,\"revision\":-5}",
                "{\"instance\":\"" + INSTANCE + "\",\"bytes\":2097152,\"revision\":9223372036854775807}",
                "{\"instance\":\"" + INSTANCE + "\",\"bytes\":{\"$gt\":0}}", "{\"instance\":[\"" + INSTANCE + "\"],\"bytes\":2097152}",
                "{\"instance\":\"../" + INSTANCE + "\",\"bytes\":2097152}", "{\"instance\":\"" + INSTANCE + "\",\"bytes\":2097152"));
        hostile.add("{\"instance\":\"" + INSTANCE + "\",\"bytes\":2097152,\"pad\":\"" + "x".repeat(8192) + "\"}");
        for (String body : List.of("", "null", "[]", "\"text\"", "7", "{}", "not json")) {
            Answer answer = send(cluster, "/cluster/limit?cluster=" + clusterName, body);
            assertThat(answer.status()).as("body %s answered %s", body, answer.body()).isEqualTo(400);
            assertThat(answer.body()).contains("the body must be");
        }
        Answer tooLarge = send(cluster, "/cluster/limit?cluster=" + clusterName, hostile.getLast());
        assertThat(tooLarge.status()).isEqualTo(413);
        assertThat(tooLarge.body()).contains("larger than 4096 bytes");
        for (String body : hostile) {
            Answer answer = send(cluster, "/cluster/limit?cluster=" + clusterName, body);
            assertThat(answer.status()).as("body %s answered %s", body.length() > 80 ? body.substring(0, 80) + "..." : body, answer.body())
                    .isNotEqualTo(200);
            assertThat(limitPages()).as("after %s", body.length() > 80 ? body.substring(0, 80) + "..." : body).isEqualTo(before);
        }
        assertThat(send(cluster, "/cluster/limit?cluster=other-" + clusterName, "{\"instance\":\"" + INSTANCE + "\",\"bytes\":2097152}")
                .status()).isEqualTo(409);
        assertThat(limitPages()).isEqualTo(before);

        ClusterClient client = new ClusterClient(List.of(URI.create("https://127.0.0.1:" + endpoint.port())), clusterName,
                Duration.ofSeconds(5), cluster);
        ClusterStatus status = client.clusterStatus(List.of());
        assertThat(status.instances()).hasSize(1);
        assertThat(status.instances().getFirst().instance()).isEqualTo(INSTANCE);
        LimitResult changed = client.limit(INSTANCE, 4L << 20, null);
        assertThat(changed.outcome()).isEqualTo(LimitResult.Outcome.APPLIED);
        assertThat(limitPages()).isEqualTo(changed.effectivePages()).isNotEqualTo(before);
        client.limit(INSTANCE, Long.MAX_VALUE, null);
    }

    @Test
    void theLimitCommandOverHttpsTakesTheContextBuiltBeforeItsArgumentsWereParsed() throws Exception {
        // the password is only in the map given to the early build: the command succeeds through that context alone
        assertThat(System.getenv(ClusterOptions.KEY_STORE_PASSWORD)).isNull();
        String[] args = {"limit", INSTANCE, "6MiB", "--cluster", "--cluster-name", clusterName, "--node", "127.0.0.1:" + endpoint.port(),
            "--tls-key-store", keys};
        int before = limitPages();
        KvPager root = new KvPager();
        root.earlyTls = EarlyClientTls.start(args, Map.of(ClusterOptions.KEY_STORE_PASSWORD, PASSWORD));
        assertThat(root.earlyTls).isNotNull();
        StringWriter out = new StringWriter();
        StringWriter err = new StringWriter();
        CommandLine command = KvPager.commandLine(root);
        command.setOut(new PrintWriter(out, true));
        command.setErr(new PrintWriter(err, true));
        try {
            assertThat(command.execute(args)).as("stderr: %s", err).isZero();
            assertThat(out.toString()).startsWith(INSTANCE + ": APPLIED limit 6.0 MiB per rank");
            assertThat(limitPages()).isNotEqualTo(before);
        } finally {
            new ClusterClient(List.of(URI.create("https://127.0.0.1:" + endpoint.port())), clusterName, Duration.ofSeconds(5),
                    EndpointTls.clientContext(keys, PASSWORD, keys, PASSWORD)).limit(INSTANCE, Long.MAX_VALUE, null);
        }
    }

    private static int limitPages() throws Exception {
        return cache.stats().await(10, TimeUnit.SECONDS).pool().limitPages();
    }

    private record Answer(int status, String body) {
    }

    private static Answer send(SSLContext tls, String path, String body) throws IOException {
        HttpsURLConnection connection = (HttpsURLConnection) URI.create("https://127.0.0.1:" + endpoint.port() + path).toURL().openConnection();
        connection.setSSLSocketFactory(tls.getSocketFactory());
        connection.setHostnameVerifier((host, session) -> true);
        connection.setConnectTimeout(5000);
        connection.setReadTimeout(10_000);
        try {
            if (body != null) {
                connection.setRequestMethod("POST");
                connection.setDoOutput(true);
                try (OutputStream out = connection.getOutputStream()) {
                    out.write(body.getBytes(StandardCharsets.UTF_8));
                }
            }
            int status = connection.getResponseCode();
            try (InputStream in = status < 400 ? connection.getInputStream() : connection.getErrorStream()) {
                return new Answer(status, in == null ? "" : new String(in.readAllBytes(), StandardCharsets.UTF_8));
            }
        } finally {
            connection.disconnect();
        }
    }

    /** A client that trusts the node but has no key of its own. */
    private static SSLContext trustOnly() throws Exception {
        KeyStore store = KeyStore.getInstance("PKCS12");
        try (InputStream in = java.nio.file.Files.newInputStream(Path.of(keys))) {
            store.load(in, PASSWORD.toCharArray());
        }
        TrustManagerFactory trust = TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
        trust.init(store);
        SSLContext context = SSLContext.getInstance("TLS");
        context.init(null, trust.getTrustManagers(), null);
        return context;
    }

    private static int freePort() throws IOException {
        try (ServerSocket socket = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            return socket.getLocalPort();
        }
    }
}
