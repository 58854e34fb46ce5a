package io.kvpager.cluster;

import static io.kvpager.cluster.process.TestClusters.await;
import static org.assertj.core.api.Assertions.assertThat;

import com.hazelcast.config.Config;
import com.hazelcast.core.Hazelcast;
import com.hazelcast.core.HazelcastInstance;
import com.hazelcast.map.IMap;
import io.kvpager.Allocation;
import io.kvpager.LimitResult;
import io.kvpager.MissReason;
import io.kvpager.cache.CacheStats;
import io.kvpager.cache.GpuStats;
import io.kvpager.cache.KvCache;
import io.kvpager.cache.KvCacheOptions;
import io.kvpager.cluster.process.TestClusters;
import io.kvpager.impl.broker.GpuBroker;
import io.kvpager.sim.SimOptions;
import io.kvpager.worker.RankWorker;
import io.kvpager.worker.RankWorkerOptions;
import io.vertx.core.eventbus.DeliveryOptions;
import io.vertx.core.json.JsonObject;
import java.io.OutputStream;
import java.net.InetAddress;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.KeyStore;
import java.security.cert.X509Certificate;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLSocket;
import javax.net.ssl.TrustManager;
import javax.net.ssl.X509TrustManager;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * A stranger against a TLS cluster, as an attacker would go about it: it takes a member's
 * certificate from a TLS handshake on the member's event-bus port, computes the name TLS nodes
 * joined under before the cluster secret (the name and the certificates' fingerprint), and tries
 * to join as a plain Hazelcast member with kvpager's packaged member config: it finds nobody.
 * Then, as an eavesdropper on the member network would, it joins under the name it read off the
 * wire and writes the records that decide memory (a GPU's capacity and shares, the instance
 * directory): no cache acts on them; every alloc is granted as before, and the ledger and the
 * rank agree. A member inside the membership that puts back an older sealed record, deletes one,
 * or writes a runtime limit of its own making changes no cache's grants either.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class StrangerTest {

    private static final String PASSWORD = "test-only-" + UUID.randomUUID();
    private static final String SECRET = "test-secret-" + UUID.randomUUID();
    private static final int PAGES = 8;
    /** Blocks of 64 KiB in 2 layers: one 2 MiB page per alloc. */
    private static final int BLOCKS_PER_PAGE = 32;

    @TempDir
    static Path dir;
    private static String clusterKeys;

    private final List<ClusterNode> nodes = new ArrayList<>();
    private final List<HazelcastInstance> strangers = new ArrayList<>();

    @BeforeAll
    static void makeCertificate() throws Exception {
        clusterKeys = dir.resolve("cluster.p12").toString();
        EventBusTlsTest.keytool("-genkeypair", "-alias", "node", "-keyalg", "EC", "-groupname", "secp256r1", "-dname", "CN=kvpager-test",
                "-validity", "2", "-storetype", "PKCS12", "-keystore", clusterKeys, "-storepass", PASSWORD, "-keypass", PASSWORD);
    }

    @AfterEach
    void close() {
        for (HazelcastInstance stranger : strangers) {
            stranger.getLifecycleService().terminate();
        }
        for (ClusterNode node : nodes.reversed()) {
            await(node.close());
        }
    }

    @Test
    void aStrangerWithTheCertificatesCannotJoinAndOneWithTheNameChangesNoGrant() throws Exception {
        String name = TestClusters.freshName("kvpager-stranger");
        int busPort = TestClusters.freePort();
        ClusterNode member = start(TestClusters.nodeOptions(name, null).setPort(busPort)
                .setKeyStore(clusterKeys).setKeyStorePassword(PASSWORD).setClusterSecret(SECRET));

        // the certificate, as any TLS handshake on the event-bus port hands it over
        X509Certificate certificate = handshakeCertificate(busPort);
        Path trust = dir.resolve("stolen.p12");
        KeyStore stolen = KeyStore.getInstance("PKCS12");
        stolen.load(null, null);
        stolen.setCertificateEntry("member", certificate);
        try (OutputStream out = Files.newOutputStream(trust)) {
            stolen.store(out, "stolen".toCharArray());
        }
        String oldName = name + "-" + EventBusTls.fingerprint(trust.toString(), "stolen");
        assertThat(oldName).isNotEqualTo(member.clusterName());

        HazelcastInstance outside = stranger(oldName, member.memberAddress());
        assertThat(outside.getCluster().getMembers()).as("the stranger under the name of the certificates").hasSize(1);
        assertThat(member.members()).isEqualTo(1);

        // an eavesdropper reads the name in clear on the member network: it joins, but lacks the secret
        HazelcastInstance inside = stranger(member.clusterName(), member.memberAddress());
        assertThat(inside.getCluster().getMembers()).hasSize(2);
        String gpu = "sim:stranger:0@" + InetAddress.getLocalHost().getHostName();
        IMap<String, String> capacities = inside.getMap(GpuBroker.CAPACITIES);
        IMap<String, String> shares = inside.getMap(GpuBroker.SHARES);
        capacities.put(gpu, "1");
        shares.put(gpu, forgedShares());
        inside.<String, String>getMap(ClusterDirectory.INSTANCES).put("forged", member.nodeId());

        await(member.deployWorker(new RankWorkerOptions().setInstance("stranger").setPp(0).setTp(0)
                .setSim(SimOptions.defaults().withGpuKey("stranger").withCapacityBytes(1L << 30))));
        KvCache cache = await(member.deployCache(new KvCacheOptions().setInstance("stranger").setTp(1).setLayers(2)
                .setBlockBytes(64 << 10).setPages(PAGES).setReserveLow(0).setReserveHigh(0).setAdaptiveReserve(false)
                .setLocalWorkers(false)));
        List<Allocation> held = new ArrayList<>();
        for (int i = 0; i < PAGES / 2; i++) {
            Allocation allocation = await(cache.alloc(BLOCKS_PER_PAGE));
            assertThat(allocation.isMiss()).as("alloc %d: %s", i, allocation.detail()).isFalse();
            held.add(allocation);
        }
        // forged again while the cache runs: what the stranger wrote over the record is not acted on either
        shares.put(gpu, forgedShares());
        for (int i = PAGES / 2; i < PAGES; i++) {
            Allocation allocation = await(cache.alloc(BLOCKS_PER_PAGE));
            assertThat(allocation.isMiss()).as("alloc %d after the forged record: %s", i, allocation.detail()).isFalse();
            held.add(allocation);
        }

        CacheStats stats = await(cache.stats());
        assertThat(stats.pool().inUsePages()).isEqualTo(PAGES);
        assertThat(mappedPages(member, "stranger")).as("the rank maps what the ledger holds").isEqualTo(stats.pool().mappedPages());
        GpuStats budget = stats.gpus().getFirst();
        assertThat(budget.gpu()).isEqualTo(gpu);
        assertThat(budget.capacityBytes()).as("the worker's capacity, not the forged 1 byte").isEqualTo(1L << 30);
        assertThat(budget.takenBytes()).as("the cache's own share, without the forged 2^50").isEqualTo(budget.leasedBytes()).isLessThan(1L << 30);
        assertThat(await(member.directory().coordinated())).containsExactly("stranger");
        for (Allocation blocks : held) {
            await(cache.free(blocks));
        }
        await(cache.close());
    }

    @Test
    void aMemberThatPutsBackAnOlderBudgetRecordOrDeletesItChangesNothingTheCacheActsOn() throws Exception {
        String name = TestClusters.freshName("kvpager-replay");
        ClusterNode member = start(TestClusters.nodeOptions(name, null).setKeyStore(clusterKeys).setKeyStorePassword(PASSWORD)
                .setClusterSecret(SECRET));
        // inside the membership, as in the first test; a replay needs no secret, only a copy of a record once sealed
        HazelcastInstance inside = stranger(member.clusterName(), member.memberAddress());
        assertThat(inside.getCluster().getMembers()).hasSize(2);
        String gpu = "sim:replay:0@" + InetAddress.getLocalHost().getHostName();
        IMap<String, String> shares = inside.getMap(GpuBroker.SHARES);

        await(member.deployWorker(new RankWorkerOptions().setInstance("replay").setPp(0).setTp(0)
                .setSim(SimOptions.defaults().withGpuKey("replay").withCapacityBytes(1L << 30))));
        KvCache cache = await(member.deployCache(new KvCacheOptions().setInstance("replay").setTp(1).setLayers(2)
                .setBlockBytes(64 << 10).setPages(PAGES).setReserveLow(0).setReserveHigh(0).setAdaptiveReserve(false)
                .setLocalWorkers(false)));
        List<int[]> held = new ArrayList<>();
        held.add(await(cache.alloc(BLOCKS_PER_PAGE)).blocks());
        String copied = shares.get(gpu);
        assertThat(copied).as("the sealed record after the first page").isNotNull();
        for (int i = 1; i < PAGES; i++) {
            Allocation allocation = await(cache.alloc(BLOCKS_PER_PAGE));
            assertThat(allocation.isMiss()).as("alloc %d: %s", i, allocation.detail()).isFalse();
            held.add(allocation.blocks());
        }
        assertThat(shares.get(gpu)).as("the record moved on with the cache's lease").isNotEqualTo(copied);
        long pagesBytes = (long) PAGES * BLOCKS_PER_PAGE * (64 << 10);

        // the cache's lease may grow meanwhile (its own writes, over what the stranger left): the books follow it
        shares.put(gpu, copied);
        GpuStats replayed = await(cache.stats()).gpus().getFirst();
        assertThat(replayed.takenBytes()).as("the newest record proved, not the one put back").isEqualTo(replayed.leasedBytes())
                .isGreaterThanOrEqualTo(pagesBytes);

        shares.delete(gpu);
        GpuStats deleted = await(cache.stats()).gpus().getFirst();
        assertThat(deleted.takenBytes()).as("a deleted record reads as the newest proved").isEqualTo(deleted.leasedBytes())
                .isGreaterThanOrEqualTo(pagesBytes);

        for (int[] blocks : held) {
            await(cache.free(Arrays.stream(blocks).boxed().toList()));
        }
        for (int i = 0; i < PAGES; i++) {
            Allocation allocation = await(cache.alloc(BLOCKS_PER_PAGE));
            assertThat(allocation.isMiss()).as("alloc %d after the record was deleted: %s", i, allocation.detail()).isFalse();
        }
        CacheStats stats = await(cache.stats());
        assertThat(mappedPages(member, "replay")).as("the rank maps what the ledger holds").isEqualTo(stats.pool().mappedPages());
        assertThat(stats.gpus().getFirst().takenBytes()).isEqualTo(stats.gpus().getFirst().leasedBytes());
        await(cache.close());
    }

    @Test
    void aMemberThatForgesPutsBackOrDeletesARuntimeLimitChangesNoCachesGrants() throws Exception {
        String name = TestClusters.freshName("kvpager-limit-forged");
        ClusterNode member = start(TestClusters.nodeOptions(name, null).setKeyStore(clusterKeys).setKeyStorePassword(PASSWORD)
                .setClusterSecret(SECRET));
        HazelcastInstance inside = stranger(member.clusterName(), member.memberAddress());
        assertThat(inside.getCluster().getMembers()).hasSize(2);
        IMap<String, String> limits = inside.getMap(MemberConfig.LIMITS);
        String instance = "limited";
        String key = instance + ".group0";
        await(member.deployWorker(new RankWorkerOptions().setInstance(instance).setPp(0).setTp(0)
                .setSim(SimOptions.defaults().withGpuKey(instance).withCapacityBytes(1L << 30))));

        KvCache first = await(member.deployCache(limitedOptions(instance)));
        LimitResult five = await(first.setMemoryLimit(5 * PAGE_BYTES));
        assertThat(five.outcome()).isEqualTo(LimitResult.Outcome.APPLIED);
        String copied = limits.get(key);
        assertThat(copied).as("the sealed record of the 5-page limit").isNotNull().doesNotStartWith("{");
        LimitResult twelve = await(first.setMemoryLimit(12 * PAGE_BYTES));
        assertThat(twelve.revision()).isGreaterThan(five.revision());
        await(first.close());

        // put back: the 5-page record, sealed by the node itself, is older than the one it proved
        limits.put(key, copied);
        await(assertLimitAndGrants(member, instance, 12).close());

        // forged: a record of the member's own making, below the configured limit and of a higher revision
        String forged = new JsonObject().put("bytes", PAGE_BYTES).put("revision", twelve.revision() + 1000).encode();
        limits.put(key, forged);
        KvCache third = assertLimitAndGrants(member, instance, 12);
        // the next change is sealed over the forged record, under the revision after the last one applied
        LimitResult ten = await(third.setMemoryLimit(10 * PAGE_BYTES));
        assertThat(ten.revision()).isEqualTo(twelve.revision() + 1);
        assertThat(limits.get(key)).isNotEqualTo(forged).doesNotStartWith("{");
        await(third.close());

        // deleted: the records of limits are never removed, so the newest one proved stands
        limits.delete(key);
        await(assertLimitAndGrants(member, instance, 10).close());

        // a forged limit for a cache that never had one: the configured limit stands
        limits.put("unlimited.group0", new JsonObject().put("bytes", PAGE_BYTES).put("revision", 1).encode());
        await(member.deployWorker(new RankWorkerOptions().setInstance("unlimited").setPp(0).setTp(0)
                .setSim(SimOptions.defaults().withGpuKey("unlimited").withCapacityBytes(1L << 30))));
        await(assertLimitAndGrants(member, "unlimited", 16).close());
    }

    /** Blocks of 64 KiB, 2 layers, 2 buffers: 8 MiB per page on the rank. */
    private static final long PAGE_BYTES = 4 * (2L << 20);

    private static KvCacheOptions limitedOptions(String instance) {
        return new KvCacheOptions().setInstance(instance).setTp(1).setLayers(2).setKvBuffers(2).setBlockBytes(64 << 10)
                .setPages(16).setReserveLow(0).setReserveHigh(0).setAdaptiveReserve(false).setLocalWorkers(false)
                .setMemoryLimitBytes(16 * PAGE_BYTES);
    }

    /**
     * Starts a coordinator of {@code instance} on {@code member} and checks that it holds
     * {@code pages} as its limit and grants exactly that many one-page allocations, the ledger and
     * the rank agreeing; returns the cache, its allocations freed.
     */
    private static KvCache assertLimitAndGrants(ClusterNode member, String instance, int pages) {
        KvCache cache = await(member.deployCache(limitedOptions(instance)));
        assertThat(await(cache.stats()).pool().limitPages()).as("the limit in force").isEqualTo(pages);
        List<int[]> held = new ArrayList<>();
        for (int i = 0; i < pages; i++) {
            Allocation allocation = await(cache.alloc(BLOCKS_PER_PAGE));
            assertThat(allocation.isMiss()).as("alloc %d of %d: %s", i, pages, allocation.detail()).isFalse();
            held.add(allocation.blocks());
        }
        if (pages < 16) {
            Allocation over = await(cache.alloc(BLOCKS_PER_PAGE));
            assertThat(over.missReason()).as("past the limit: %s", over.detail()).isEqualTo(MissReason.LIMIT);
        }
        CacheStats stats = await(cache.stats());
        assertThat(stats.pool().inUsePages()).isEqualTo(pages);
        assertThat(mappedPages(member, instance)).as("the rank maps what the ledger holds").isEqualTo(stats.pool().mappedPages());
        for (int[] blocks : held) {
            await(cache.free(Arrays.stream(blocks).boxed().toList()));
        }
        return cache;
    }

    private ClusterNode start(ClusterNodeOptions options) {
        ClusterNode node = await(ClusterNode.start(options));
        nodes.add(node);
        return node;
    }

    /** A plain Hazelcast member with kvpager's packaged config under {@code clusterName}, joining through {@code join}. */
    private HazelcastInstance stranger(String clusterName, String join) {
        ClusterNodeOptions options = TestClusters.nodeOptions("stranger", join);
        Config config = MemberConfig.of(options, clusterName);
        config.setInstanceName("stranger-" + UUID.randomUUID());
        HazelcastInstance instance = Hazelcast.newHazelcastInstance(config);
        strangers.add(instance);
        return instance;
    }

    /** One share claiming 2^50 bytes under an owner of the stranger's making. */
    private static String forgedShares() {
        return new JsonObject().put("stranger.group0", new JsonObject().put("owner", UUID.randomUUID() + "#1").put("bytes", 1L << 50))
                .encode();
    }

    /** The member's certificate, recorded as a client checks it: the handshake may then fail, as the member wants ours. */
    private static X509Certificate handshakeCertificate(int port) throws Exception {
        AtomicReference<X509Certificate> seen = new AtomicReference<>();
        TrustManager recorder = new X509TrustManager() {
            @Override
            public void checkClientTrusted(X509Certificate[] chain, String authType) {
            }

            @Override
            public void checkServerTrusted(X509Certificate[] chain, String authType) {
                seen.set(chain[0]);
            }

            @Override
            public X509Certificate[] getAcceptedIssuers() {
                return new X509Certificate[0];
            }
        };
        SSLContext context = SSLContext.getInstance("TLS");
        context.init(null, new TrustManager[] {recorder}, null);
        try (SSLSocket socket = (SSLSocket) context.getSocketFactory().createSocket("127.0.0.1", port)) {
            socket.startHandshake();
        } catch (java.io.IOException refusedWithoutOurs) {
            // the member asks for a client certificate; its own has been seen by then
        }
        assertThat(seen.get()).as("the member's certificate").isNotNull();
        return seen.get();
    }

    private static long mappedPages(ClusterNode node, String instance) {
        JsonObject stats = await(node.vertx().eventBus().<JsonObject>request(RankWorker.address(instance, 0, 0), new JsonObject(),
                new DeliveryOptions().addHeader("action", "stats").setSendTimeout(10_000)).map(m -> m.body()));
        return stats.getJsonObject("groups").getJsonObject("0").getLong("mappedPages");
    }
}
