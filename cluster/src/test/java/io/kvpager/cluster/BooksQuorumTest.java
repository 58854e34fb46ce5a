package io.kvpager.cluster;

import io.kvpager.cluster.process.TestClusters;
import io.kvpager.impl.broker.GpuBroker;
import io.vertx.core.Future;
import io.vertx.core.shareddata.AsyncMap;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.time.Duration;
import java.util.concurrent.TimeUnit;

import static io.kvpager.cluster.process.TestClusters.await;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * The books under a quorum ({@link ClusterNodeOptions#setQuorum}): a side of the cluster with
 * fewer members than the quorum may read the GPU budgets and the directory but not write them,
 * while other maps stay writable; a node that registers there is listed once enough members
 * have joined. Without a quorum, one node alone writes everything, as a development cluster must.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class BooksQuorumTest {

    private static final Duration BOUND = Duration.ofSeconds(30);

    @RegisterExtension
    final StartedNodes nodes = new StartedNodes();


    @Test
    void oneNodeWithoutAQuorumWritesTheBooks() {
        ClusterNode alone = start(TestClusters.nodeOptions(TestClusters.freshName("kvpager-noquorum"), null));
        await(shares(alone).compose(m -> m.put("gpu-x", "{}")));
        await(alone.directory().registerCoordinator("dev"));
        assertThat(await(alone.directory().coordinated())).containsExactly("dev");
    }

    @Test
    void aSideSmallerThanTheQuorumMayReadTheBooksButNotWriteThem() {
        String cluster = TestClusters.freshName("kvpager-quorum");
        ClusterNode first = start(TestClusters.nodeOptions(cluster, null).setQuorum(2));
        ClusterNode second = start(TestClusters.nodeOptions(cluster, first.memberAddress()).setQuorum(2));
        await(shares(first).compose(m -> m.put("gpu-x", "before")));
        await(first.directory().registerCoordinator("llama"));

        // the other member gone, the first is a side of one: below the quorum
        await(second.close());
        nodes.remove(second);
        await().atMost(BOUND).until(() -> first.members() == 1);
        await().atMost(BOUND).until(() -> refused(shares(first).compose(m -> m.put("gpu-x", "after"))));
        assertThat(refused(first.vertx().sharedData().<String, Long>getAsyncMap(GpuBroker.CAPACITIES).compose(m -> m.put("gpu-x", 1L))))
                .isTrue();
        assertThat(refused(first.vertx().sharedData().<String, String>getAsyncMap(ClusterDirectory.INSTANCES)
                .compose(m -> m.remove("llama")))).isTrue();
        // refused, the record is as it was; reads and unprotected maps still work
        assertThat(record(first)).isEqualTo("before");
        assertThat(await(first.directory().coordinated())).containsExactly("llama");
        await(first.vertx().sharedData().<String, String>getAsyncMap("kvpager.test-unprotected").compose(m -> m.put("k", "v")));

        // a registration below the quorum answers at once and is listed once a member joins
        await(first.directory().registerCoordinator("mistral"));
        assertThat(await(first.directory().coordinated())).containsExactly("llama");
        ClusterNode third = start(TestClusters.nodeOptions(cluster, first.memberAddress()).setQuorum(2));
        await().atMost(BOUND).until(() -> await(third.directory().coordinated()).contains("mistral"));
        await(shares(first).compose(m -> m.put("gpu-x", "after")));
        assertThat(record(third)).isEqualTo("after");
    }

    private ClusterNode start(ClusterNodeOptions options) {
        ClusterNode node = TestClusters.startHere(options);
        nodes.add(node);
        return node;
    }

    private static Future<AsyncMap<String, String>> shares(ClusterNode node) {
        return node.vertx().sharedData().getAsyncMap(GpuBroker.SHARES);
    }

    private static String record(ClusterNode node) {
        return await(shares(node).compose(m -> m.get("gpu-x")));
    }

    /** Whether {@code write} failed with Hazelcast's split-brain protection refusing it. */
    private static boolean refused(Future<?> write) {
        Throwable failure = write.transform(ar -> Future.succeededFuture(ar.cause())).await();
        if (failure != null && !ClusterDirectory.refusedByQuorum(failure)) {
            throw new AssertionError("the write failed, but not for the quorum", failure);
        }
        return failure != null;
    }
}
