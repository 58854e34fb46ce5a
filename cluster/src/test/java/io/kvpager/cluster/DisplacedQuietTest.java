package io.kvpager.cluster;

import io.kvpager.cache.KvCache;
import io.kvpager.cache.KvCacheOptions;
import io.kvpager.cluster.process.TestClusters;
import io.kvpager.impl.coordinator.CoordinatorVerticle;
import io.kvpager.internal.bus.KeptRegistration;
import io.kvpager.internal.membership.ClusterMembership;
import io.vertx.core.eventbus.DeliveryOptions;
import io.vertx.core.eventbus.MessageConsumer;
import io.vertx.core.json.JsonObject;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.time.Duration;
import java.util.concurrent.TimeUnit;

import static io.kvpager.cluster.process.TestClusters.await;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * A displaced coordinator that finds, once its node is a member of the whole cluster again,
 * that another node's coordinator serves its instance stays displaced and stops answering at the
 * coordinator address: every request reaches the one that serves, also after its registration
 * would have been put back.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class DisplacedQuietTest {

    private static final String INSTANCE = "quiet";
    private static final String ADDRESS = "kvpager." + INSTANCE + ".coordinator";

    @RegisterExtension
    final StartedNodes nodes = new StartedNodes();
    private LogLines log;

    @AfterEach
    void tearDown() {
        if (log != null) {
            log.close();
        }
    }

    @Test
    void aCoordinatorThatStaysDisplacedNoLongerAnswersAndEveryRequestReachesTheOneThatServes() throws Exception {
        String cluster = TestClusters.freshName("kvpager-quiet");
        ClusterNode here = TestClusters.startHere(cluster);
        nodes.add(here);
        ClusterNode other = await(ClusterNode.start(TestClusters.nodeOptions(cluster, here.memberAddress())));
        nodes.add(other);
        log = LogLines.of(CoordinatorVerticle.class);
        // no workers: the coordinator answers without its tensors
        KvCache cache = await(here.deployCache(new KvCacheOptions().setInstance(INSTANCE).setTp(1).setLayers(1).setKvBuffers(2)
                .setBlockBytes(64 << 10).setPages(4).setLocalWorkers(false).setLazyStart(true)));
        assertThat(ask(here).getMap()).as("it answers at its address").doesNotContainKey("standIn");

        // its node is counted gone; meanwhile the coordinator of another node serves the instance
        ClusterMembership membership = ClusterMembership.of(here.vertx());
        membership.displaced("a test: this node was counted gone");
        MessageConsumer<JsonObject> serving = other.vertx().eventBus().<JsonObject>consumer(ADDRESS,
                m -> m.reply(new JsonObject().put("standIn", other.nodeId())));
        await(serving.completion());
        membership.rejoined();

        Awaitility.await().atMost(Duration.ofSeconds(10)).pollInterval(Duration.ofMillis(20))
                .until(() -> log.lines().stream().anyMatch(l -> l.contains("this one stays displaced")));
        assertThat(log.lines()).anySatisfy(l -> assertThat(l).contains("another coordinator serves instance quiet on node ["
                + other.nodeId() + "]; this one stays displaced and no longer answers at " + ADDRESS));
        assertThat(cache.stats().await(10, TimeUnit.SECONDS).reason()).as("its own stats say so").contains("displaced");

        // the cluster's view of the address settles (this node's removal of its registration reaches every member's
        // routing a moment after the line, under load); from then on every request is served by the other node,
        // across two of the registrations' checks
        Awaitility.await().atMost(Duration.ofSeconds(10)).pollInterval(Duration.ofMillis(20)).ignoreExceptions()
                .until(() -> other.nodeId().equals(ask(here).getString("standIn")));
        long until = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(2 * KeptRegistration.CHECK_MS + 500);
        int asked = 0;
        while (System.nanoTime() < until) {
            assertThat(ask(here).getString("standIn")).isEqualTo(other.nodeId());
            assertThat(ask(other).getString("standIn")).isEqualTo(other.nodeId());
            asked += 2;
        }
        assertThat(asked).isGreaterThanOrEqualTo(20);
    }

    private static JsonObject ask(ClusterNode from) {
        return await(from.vertx().eventBus().<JsonObject>request(ADDRESS, new JsonObject(),
                new DeliveryOptions().addHeader("action", "stats").setSendTimeout(10_000)).map(m -> m.body()));
    }
}
