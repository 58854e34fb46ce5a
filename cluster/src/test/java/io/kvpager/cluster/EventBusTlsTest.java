package io.kvpager.cluster;

import io.kvpager.Allocation;
import io.kvpager.cache.KvCache;
import io.kvpager.cache.KvCacheOptions;
import io.kvpager.cluster.process.TestClusters;
import io.kvpager.sim.SimOptions;
import io.kvpager.worker.RankWorker;
import io.kvpager.worker.RankWorkerOptions;
import io.vertx.core.Future;
import io.vertx.core.eventbus.DeliveryOptions;
import io.vertx.core.eventbus.ReplyException;
import io.vertx.core.eventbus.ReplyFailure;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.io.OutputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.KeyStore;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.TimeUnit;

import static io.kvpager.cluster.process.TestClusters.await;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * The event bus between nodes over TLS, with a certificate the test makes for itself with the
 * JDK's keytool: a cache whose rank runs on another node works as without TLS; a node without
 * the certificate, or with the certificate and key but another cluster secret, does not know the
 * cluster's name and does not start; a TLS node without a secret is refused before it joins; a
 * node that holds the secret and trusts the cluster's certificate, but holds another key, joins yet
 * cannot deliver a message to a rank.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class EventBusTlsTest {

    /** Made up for this run; protects keys that live in a temporary directory for the test's length. */
    private static final String PASSWORD = "test-only-" + UUID.randomUUID();
    private static final String SECRET = "test-secret-" + UUID.randomUUID();

    @TempDir
    static Path dir;
    private static String clusterKeys;
    private static String rogueKeys;
    private static String clusterTrust;

    private final List<ClusterNode> nodes = new ArrayList<>();

    @BeforeAll
    static void makeCertificates() throws Exception {
        clusterKeys = dir.resolve("cluster.p12").toString();
        rogueKeys = dir.resolve("rogue.p12").toString();
        clusterTrust = dir.resolve("trust.p12").toString();
        // the two key pairs at once (each keytool is a JVM of its own); the trust store from the cluster's certificate in this JVM
        keytools(List.of(
                List.of("-genkeypair", "-alias", "node", "-keyalg", "EC", "-groupname", "secp256r1", "-dname", "CN=kvpager-test",
                        "-validity", "2", "-storetype", "PKCS12", "-keystore", clusterKeys, "-storepass", PASSWORD, "-keypass", PASSWORD),
                List.of("-genkeypair", "-alias", "node", "-keyalg", "EC", "-groupname", "secp256r1", "-dname", "CN=kvpager-rogue",
                        "-validity", "2", "-storetype", "PKCS12", "-keystore", rogueKeys, "-storepass", PASSWORD, "-keypass", PASSWORD)));
        KeyStore keys = KeyStore.getInstance(Path.of(clusterKeys).toFile(), PASSWORD.toCharArray());
        KeyStore trust = KeyStore.getInstance("PKCS12");
        trust.load(null, null);
        trust.setCertificateEntry("cluster", keys.getCertificate("node"));
        try (OutputStream out = Files.newOutputStream(Path.of(clusterTrust))) {
            trust.store(out, PASSWORD.toCharArray());
        }
    }

    @AfterEach
    void closeNodes() {
        for (ClusterNode node : nodes.reversed()) {
            await(node.close());
        }
    }

    @Test
    void ranksAnswerOverTlsAndNodesWithoutTheClustersKeyCannotJoinOrSend() {
        String name = TestClusters.freshName("kvpager-tls");
        ClusterNode coordinator = start(TestClusters.nodeOptions(name, null).setKeyStore(clusterKeys).setKeyStorePassword(PASSWORD).setClusterSecret(SECRET));
        ClusterNode worker = start(TestClusters.nodeOptions(name, coordinator.memberAddress())
                .setKeyStore(clusterKeys).setKeyStorePassword(PASSWORD).setClusterSecret(SECRET));
        assertThat(coordinator.clusterName()).startsWith(name + "-").isEqualTo(worker.clusterName());
        assertThat(coordinator.members()).isEqualTo(2);

        await(worker.deployWorker(new RankWorkerOptions().setInstance("tls").setPp(0).setTp(0).setSim(SimOptions.defaults().withGpuKey("tls"))));
        KvCache cache = await(KvCache.deploy(coordinator.vertx(), new KvCacheOptions().setInstance("tls").setTp(1).setLayers(2)
                .setBlockBytes(64 << 10).setPages(8).setReserveLow(0).setReserveHigh(0).setAdaptiveReserve(false)
                .setSendTimeoutMs(30_000).setLocalWorkers(false)));
        Allocation allocation = await(cache.alloc(32));
        assertThat(allocation.isMiss()).as(allocation.detail()).isFalse();
        assertThat(mappedPages(coordinator)).isEqualTo(1);

        // no certificate: it does not know the cluster's name, and rather than serve alone it does not start
        Throwable plain = failure(ClusterNode.start(TestClusters.nodeOptions(name, coordinator.memberAddress())));
        assertThat(plain).isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("cluster name '" + name + "'")
                .hasMessageContaining(coordinator.memberAddress() + " answered with another cluster name");
        assertThat(coordinator.members()).isEqualTo(2);

        // the cluster's key and certificate without the secret: refused before it joins, saying why
        assertThat(failure(ClusterNode.start(TestClusters.nodeOptions(name, coordinator.memberAddress())
                .setKeyStore(clusterKeys).setKeyStorePassword(PASSWORD))))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("clusterSecret is required with keyStore");
        // ... and with another secret: another name, so it does not start
        assertThat(failure(ClusterNode.start(TestClusters.nodeOptions(name, coordinator.memberAddress())
                .setKeyStore(clusterKeys).setKeyStorePassword(PASSWORD).setClusterSecret(SECRET + "-not"))))
                .isInstanceOf(IllegalStateException.class).hasMessageContaining("the same cluster secret");
        assertThat(coordinator.members()).isEqualTo(2);

        // the secret and the cluster's certificate, but a key the cluster does not trust: the rank never gets the message
        ClusterNode rogue = start(TestClusters.nodeOptions(name, coordinator.memberAddress())
                .setKeyStore(rogueKeys).setKeyStorePassword(PASSWORD).setTrustStore(clusterTrust).setTrustStorePassword(PASSWORD).setClusterSecret(SECRET));
        assertThat(rogue.clusterName()).isEqualTo(coordinator.clusterName());
        assertThat(coordinator.members()).isEqualTo(3);
        ReplyException undelivered = (ReplyException) failure(rogue, 3_000);
        assertThat(undelivered.failureType()).isEqualTo(ReplyFailure.TIMEOUT);
        assertThat(mappedPages(coordinator)).as("the rogue's map of page 5 never reached the rank").isEqualTo(1);

        await(cache.free(allocation));
        await(cache.close());
    }

    private ClusterNode start(ClusterNodeOptions options) {
        ClusterNode node = await(ClusterNode.start(options));
        nodes.add(node);
        return node;
    }

    /** A map of page 5 sent to the rank from {@code node}; it must fail. */
    private static Throwable failure(ClusterNode node, long timeoutMs) {
        JsonObject map = new JsonObject().put("pp", 0).put("tp", 0).put("group", 0).put("pages", new JsonArray().add(5))
                .put("requestId", "from-" + node.nodeId()).put("owner", node.nodeId() + "#1");
        try {
            node.vertx().eventBus().request(RankWorker.address("tls", 0, 0), map,
                    new DeliveryOptions().addHeader("action", "map").setSendTimeout(timeoutMs)).await(30, TimeUnit.SECONDS);
        } catch (Exception e) {
            return e;
        }
        throw new AssertionError("the map from " + node + " was answered");
    }

    private static Throwable failure(Future<?> future) {
        try {
            future.await(60, TimeUnit.SECONDS);
        } catch (Exception e) {
            return e;
        }
        throw new AssertionError("it succeeded: " + future.result());
    }

    private static long mappedPages(ClusterNode node) {
        JsonObject stats = await(node.vertx().eventBus().<JsonObject>request(RankWorker.address("tls", 0, 0), new JsonObject(),
                new DeliveryOptions().addHeader("action", "stats").setSendTimeout(10_000)).map(m -> m.body()));
        return stats.getJsonObject("groups").getJsonObject("0").getLong("mappedPages");
    }

    static void keytool(String... args) throws IOException, InterruptedException {
        keytools(List.of(List.of(args)));
    }

    /** Runs keytool once for each list of arguments, all at once, and waits for every one to succeed. */
    static void keytools(List<List<String>> runs) throws IOException, InterruptedException {
        List<Process> processes = new ArrayList<>();
        for (List<String> args : runs) {
            List<String> command = new ArrayList<>();
            command.add(Path.of(System.getProperty("java.home"), "bin", "keytool").toString());
            command.addAll(args);
            processes.add(new ProcessBuilder(command).redirectErrorStream(true).start());
        }
        for (int i = 0; i < runs.size(); i++) {
            Process process = processes.get(i);
            String output = new String(process.getInputStream().readAllBytes());
            if (!process.waitFor(60, TimeUnit.SECONDS) || process.exitValue() != 0) {
                throw new IllegalStateException("keytool " + runs.get(i).getFirst() + " failed: " + output);
            }
        }
    }
}
