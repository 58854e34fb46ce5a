package io.kvpager.cluster;

import io.vertx.core.Vertx;
import io.vertx.core.shareddata.AsyncMap;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import static io.kvpager.cluster.process.TestClusters.await;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.tuple;

/**
 * The directory on one Vert.x: what it lists, the workers no coordinator serves, and that a node
 * removes only the entries it registered itself. (Removal by a survivor needs a cluster:
 * {@code CoordinatorDeathTest}.)
 */
class ClusterDirectoryTest {

    private Vertx vertx;
    private ClusterDirectory directory;

    @BeforeEach
    void start() {
        vertx = Vertx.vertx();
        directory = ClusterDirectory.of(vertx);
    }

    @AfterEach
    void stop() {
        await(vertx.close());
    }

    @Test
    void listsInstancesAndWorkersAndTheWorkersNoCoordinatorServes() {
        assertThat(ClusterDirectory.of(vertx)).isSameAs(directory);
        await(directory.registerCoordinator("llama"));
        await(directory.registerWorker("llama", 0, 1));
        await(directory.registerWorker("llama", 0, 0));
        await(directory.registerWorker("orphan", 1, 0));
        assertThat(await(directory.coordinated())).containsExactly("llama");
        assertThat(await(directory.registeredWorkers())).extracting(RegisteredWorker::toString).containsExactly(
                "llama pp0/tp0 on node local", "llama pp0/tp1 on node local", "orphan pp1/tp0 on node local");
        assertThat(await(directory.workersWithoutCoordinator())).extracting(RegisteredWorker::rank, RegisteredWorker::instance)
                .containsExactly(tuple("pp1/tp0", "orphan"));

        await(directory.unregisterCoordinator("llama"));
        assertThat(await(directory.coordinated())).isEmpty();
        assertThat(await(directory.workersWithoutCoordinator())).hasSize(3);
        await(directory.leave());
        assertThat(await(directory.registeredWorkers())).isEmpty();
    }

    @Test
    void aNodePutsBackItsOwnEntriesThatWereLostAndLeavesOthersAlone() {
        await(directory.registerCoordinator("llama"));
        await(directory.registerCoordinator("mistral"));
        await(directory.registerWorker("llama", 0, 1));
        AsyncMap<String, String> instances = await(vertx.sharedData().<String, String>getAsyncMap(ClusterDirectory.INSTANCES));
        AsyncMap<String, String> workers = await(vertx.sharedData().<String, String>getAsyncMap(ClusterDirectory.WORKERS));
        // lost with two members that died at once; meanwhile another node took mistral over
        await(instances.remove("llama"));
        await(workers.clear());
        await(instances.put("mistral", "other-node"));

        assertThat(await(directory.restoreOwn())).isEqualTo(2);

        assertThat(await(directory.coordinated())).containsExactly("llama", "mistral");
        assertThat(await(instances.get("llama"))).isEqualTo(ClusterDirectory.LOCAL_NODE);
        assertThat(await(instances.get("mistral"))).as("another node's entry is left to it").isEqualTo("other-node");
        assertThat(await(directory.registeredWorkers())).extracting(RegisteredWorker::toString)
                .containsExactly("llama pp0/tp1 on node local");
        assertThat(await(directory.restoreOwn())).as("nothing is missing any more").isZero();
    }

    @Test
    void aNodeRemovesOnlyWhatItRegistered() {
        // another node's coordinator of the same instance took the entry over
        await(directory.registerCoordinator("llama"));
        AsyncMap<String, String> instances = await(vertx.sharedData().<String, String>getAsyncMap(ClusterDirectory.INSTANCES));
        await(instances.put("llama", "other-node"));
        await(instances.put("mistral", "other-node"));

        await(directory.unregisterCoordinator("llama"));
        await(directory.unregisterCoordinator("mistral"));
        await(directory.leave());
        assertThat(await(directory.coordinated())).containsExactly("llama", "mistral");
    }
}
