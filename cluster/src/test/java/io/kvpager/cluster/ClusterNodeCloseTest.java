package io.kvpager.cluster;

import com.hazelcast.topic.ITopic;
import io.kvpager.cluster.process.TestClusters;
import io.kvpager.internal.membership.ClusterMembership;
import io.vertx.core.internal.VertxInternal;
import io.vertx.spi.cluster.hazelcast.HazelcastClusterManager;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.time.Duration;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * Closing a node never waits on Hazelcast from an event loop: its leaving is said from a thread
 * of its own, bounded, so that a notice that cannot go out delays the close by the bound and no
 * more, while in the normal case the other members hear it.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class ClusterNodeCloseTest {

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
    void aNodeWhoseLeavingCannotBeSaidStillClosesWithinTheBoundAndNoEventLoopWaits() throws Exception {
        ClusterNode node = TestClusters.startHere(TestClusters.freshName("kvpager-close"));
        nodes.add(node);
        log = LogLines.of(ClusterNode.class);
        CountDownLatch never = new CountDownLatch(1);
        AtomicReference<Thread> sayer = new AtomicReference<>();
        node.leaveNotice(id -> {
            sayer.set(Thread.currentThread());
            try {
                // a publish that cannot complete (Hazelcast held it 59 s): released only by the test
                never.await(60, TimeUnit.SECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        });
        try {
            long began = System.nanoTime();
            node.close().await(30, TimeUnit.SECONDS);
            long tookMs = (System.nanoTime() - began) / 1_000_000;

            assertThat(tookMs).as("the close waits for the notice at most its bound, then leaves")
                    .isGreaterThanOrEqualTo(ClusterNode.LEAVE_NOTICE_TIMEOUT_MS)
                    .isLessThan(ClusterNode.LEAVE_NOTICE_TIMEOUT_MS + 15_000);
            assertThat(sayer.get()).isNotNull();
            assertThat(sayer.get().getName()).isEqualTo("kvpager-leave-notice");
            assertThat(log.lines()).anySatisfy(w -> assertThat(w).contains("could not say it is leaving within "
                    + ClusterNode.LEAVE_NOTICE_TIMEOUT_MS + " ms; it leaves regardless"));
            assertThat(log.lines()).noneSatisfy(w -> assertThat(w).contains("did not leave cluster"));
            assertThat(sayer.get().isAlive()).as("still blocked: nothing of the close waited on it").isTrue();
        } finally {
            never.countDown();
        }
    }

    @Test
    void theOtherMembersHearANodeLeaveBeforeTheBound() throws Exception {
        String cluster = TestClusters.freshName("kvpager-close");
        ClusterNode stays = TestClusters.startHere(cluster);
        nodes.add(stays);
        ClusterNode leaves = TestClusters.await(ClusterNode.start(TestClusters.nodeOptions(cluster, stays.memberAddress())));
        BlockingQueue<String> heard = new LinkedBlockingQueue<>();
        ITopic<String> topic = ((HazelcastClusterManager) ((VertxInternal) stays.vertx()).clusterManager())
                .getHazelcastInstance().getTopic(ClusterNode.LEAVING);
        topic.addMessageListener(m -> heard.add(m.getMessageObject()));
        String id = leaves.nodeId();

        log = LogLines.of(ClusterNode.class);

        TestClusters.await(leaves.close());

        assertThat(heard.poll(10, TimeUnit.SECONDS)).as("the member that stays hears the leaving").isEqualTo(id);
        assertThat(log.lines()).as("the notice went out before its bound").noneSatisfy(w -> assertThat(w).contains("could not say"));
        assertThat(log.lines()).anySatisfy(w -> assertThat(w).contains("node left cluster"));
    }

    @Test
    void theFirstNodeToLeaveANewClusterIsHeardSayingSoByAMemberThatNeverOpenedTheTopic() {
        String cluster = TestClusters.freshName("kvpager-close");
        ClusterNode stays = TestClusters.startHere(cluster);
        nodes.add(stays);
        ClusterNode leaves = TestClusters.await(ClusterNode.start(TestClusters.nodeOptions(cluster, stays.memberAddress())));
        String id = leaves.nodeId();
        try (LogLines membership = LogLines.of(ClusterMembership.class)) {
            // nothing in this cluster has said it is leaving before: the notice is the topic's first message
            TestClusters.await(leaves.close());

            await().atMost(Duration.ofSeconds(10)).untilAsserted(() -> assertThat(membership.lines())
                    .as("the member that stays heard the notice while the leaving node was still in its member list")
                    .contains("node " + id + " is leaving the cluster"));
        }
    }

    @Test
    void aClosingNodeCountsItselfStoppingFromTheStartOfItsClose() {
        ClusterNode node = TestClusters.startHere(TestClusters.freshName("kvpager-close"));
        ClusterMembership membership = ClusterMembership.of(node.vertx());
        assertThat(membership.isStopping()).isFalse();
        var closing = node.close();
        // set before the close waits on anything: ranks heard leaving from here on are told at INFO
        assertThat(membership.isStopping()).isTrue();
        assertThat(Departures.anyStopping()).as("the process's log filter counts a node closing").isTrue();
        TestClusters.await(closing);
        assertThat(Departures.anyStopping()).as("no longer once it has closed").isFalse();
    }
}
