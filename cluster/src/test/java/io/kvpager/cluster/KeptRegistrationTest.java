package io.kvpager.cluster;

import io.kvpager.cluster.process.TestClusters;
import io.kvpager.internal.bus.KeptRegistration;
import com.hazelcast.map.IMap;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.eventbus.MessageConsumer;
import io.vertx.core.internal.ContextInternal;
import io.vertx.core.internal.VertxInternal;
import io.vertx.core.spi.cluster.ClusterManager;
import io.vertx.core.spi.cluster.RegistrationInfo;
import io.vertx.spi.cluster.hazelcast.HazelcastClusterManager;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

import static io.kvpager.cluster.process.TestClusters.await;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * A consumer kept by {@link KeptRegistration} is listed again in the cluster's registry after
 * another node removed its registration, as a late notice that its node left does (the cluster
 * manager's cleanup of a departed node, run by a node that merges back after the departed node
 * listed its consumers again), and so is the node's entry in the cluster's directory of nodes,
 * which the same cleanup removes, before the registration; a consumer unregistered is not listed again.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class KeptRegistrationTest {

    private static final Duration BOUND = Duration.ofSeconds(30);
    private static final String ADDRESS = "kvpager.test-kept";

    @RegisterExtension
    final StartedNodes nodes = new StartedNodes();


    @Test
    void aRegistrationAnotherNodeRemovedIsListedAgainAndServes() {
        ClusterNode a = startTwo("kvpager-kept");
        ClusterNode b = nodes.last();
        MessageConsumer<String> consumer = answerOn(a);
        KeptRegistration kept = await(KeptRegistration.keep(a.vertx(), consumer, 100));
        await().atMost(BOUND).until(() -> "from a".equals(ask(b)));

        // b removes a's registration, as the cluster manager's cleanup of a departed node does
        List<RegistrationInfo> ofA = registrationsOf(b, a);
        assertThat(ofA).hasSize(1);
        await(removeRegistration(b, ofA.getFirst()));
        assertThat(registrationsOf(b, a)).isEmpty();

        // a lists it again, exactly as it was, and b's requests are served again
        await().atMost(BOUND).until(() -> registrationsOf(b, a).equals(ofA));
        await().atMost(BOUND).until(() -> "from a".equals(ask(b)));
        assertThat(await(kept.check())).as("nothing missing any more").isZero();
        kept.close();
    }

    @Test
    void aNodeEntryAndRegistrationALateNoticeRemovedAreListedAgain() {
        ClusterNode a = startTwo("kvpager-kept-node");
        ClusterNode b = nodes.last();
        MessageConsumer<String> consumer = answerOn(a);
        KeptRegistration kept = await(KeptRegistration.keep(a.vertx(), consumer, 60_000));
        await().atMost(BOUND).until(() -> "from a".equals(ask(b)));
        String nodeA = manager(a).getNodeId();

        // b cleans up after a as the cluster manager does for a departed node: its registrations, then its entry
        List<RegistrationInfo> ofA = registrationsOf(b, a);
        await(removeRegistration(b, ofA.getFirst()));
        nodeEntries(b).remove(nodeA);
        assertThat(nodeEntries(b).containsKey(nodeA)).isFalse();

        // one check puts both back and b's requests are served again
        assertThat(await(kept.check())).isEqualTo(1);
        assertThat(nodeEntries(b).containsKey(nodeA)).isTrue();
        assertThat(registrationsOf(b, a)).isEqualTo(ofA);
        await().atMost(BOUND).until(() -> "from a".equals(ask(b)));

        // the entry alone missing (the notice's second step after a check): the next check puts it back
        nodeEntries(b).remove(nodeA);
        assertThat(await(kept.check())).as("no registration was missing").isZero();
        assertThat(nodeEntries(b).containsKey(nodeA)).isTrue();
        await().atMost(BOUND).until(() -> "from a".equals(ask(b)));
        kept.close();
    }

    /**
     * The checks run on an event loop of the keeper's own, never on the consumer's context: a rank's
     * context is its one thread, which a lookup waiting on the cluster would hold up, and which is
     * shut down once the rank stops.
     */
    @Test
    void aConsumerWhoseThreadIsBusyIsListedAgainAllTheSame() throws Exception {
        ClusterNode a = startTwo("kvpager-kept-busy");
        ClusterNode b = nodes.last();
        ContextInternal rank = ((VertxInternal) a.vertx()).createWorkerContext();
        Promise<KeptRegistration> keeping = Promise.promise();
        rank.runOnContext(v -> KeptRegistration.keep(a.vertx(), answerOn(a), 100).onComplete(keeping));
        KeptRegistration kept = await(keeping.future());
        await().atMost(BOUND).until(() -> registrationsOf(b, a).size() == 1);
        List<RegistrationInfo> ofA = registrationsOf(b, a);

        CountDownLatch busy = new CountDownLatch(1);
        CountDownLatch done = new CountDownLatch(1);
        rank.runOnContext(v -> {
            try {
                busy.await(BOUND.toSeconds(), TimeUnit.SECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            done.countDown();
        });
        try {
            await(removeRegistration(b, ofA.getFirst()));
            await().atMost(BOUND).until(() -> registrationsOf(b, a).equals(ofA));
            assertThat(done.getCount()).as("the consumer's context still busy").isEqualTo(1);
        } finally {
            busy.countDown();
        }
        assertThat(done.await(BOUND.toSeconds(), TimeUnit.SECONDS)).isTrue();
        kept.close();
    }

    @Test
    void anUnregisteredConsumerIsNotListedAgain() {
        ClusterNode a = startTwo("kvpager-kept-gone");
        ClusterNode b = nodes.last();
        MessageConsumer<String> consumer = answerOn(a);
        KeptRegistration kept = await(KeptRegistration.keep(a.vertx(), consumer, 60_000));
        await().atMost(BOUND).until(() -> registrationsOf(b, a).size() == 1);

        await(consumer.unregister());
        await().atMost(BOUND).until(() -> registrationsOf(b, a).isEmpty());
        assertThat(await(kept.check())).isZero();
        assertThat(registrationsOf(b, a)).isEmpty();
        kept.close();
    }

    /** Starts two nodes of a fresh cluster; returns the first (the second is {@code nodes}' last). */
    private ClusterNode startTwo(String prefix) {
        String cluster = TestClusters.freshName(prefix);
        ClusterNode first = TestClusters.startHere(cluster);
        nodes.add(first);
        nodes.add(TestClusters.startHere(TestClusters.nodeOptions(cluster, first.memberAddress())));
        return first;
    }

    private static MessageConsumer<String> answerOn(ClusterNode node) {
        return node.vertx().eventBus().consumer(ADDRESS, m -> m.reply("from a"));
    }

    private static String ask(ClusterNode from) {
        try {
            return await(from.vertx().eventBus().<String>request(ADDRESS, "?").map(reply -> reply.body()));
        } catch (RuntimeException e) {
            return null;
        }
    }

    private static ClusterManager manager(ClusterNode node) {
        return ((VertxInternal) node.vertx()).clusterManager();
    }

    private static List<RegistrationInfo> registrationsOf(ClusterNode asked, ClusterNode owner) {
        Promise<List<RegistrationInfo>> listed = Promise.promise();
        manager(asked).getRegistrations(ADDRESS, listed);
        String nodeId = manager(owner).getNodeId();
        return await(listed.future()).stream().filter(info -> info.nodeId().equals(nodeId)).toList();
    }

    /** The cluster manager's directory of nodes (node id to event-bus server), as {@code on} reaches it. */
    private static IMap<String, Object> nodeEntries(ClusterNode on) {
        return ((HazelcastClusterManager) manager(on)).getHazelcastInstance().getMap("__vertx.nodeInfo");
    }

    private static Future<Void> removeRegistration(ClusterNode on, RegistrationInfo info) {
        Promise<Void> removed = Promise.promise();
        manager(on).removeRegistration(ADDRESS, info, removed);
        return removed.future();
    }
}
