package io.kvpager.cluster;

import org.junit.jupiter.api.extension.AfterEachCallback;
import org.junit.jupiter.api.extension.ExtensionContext;

import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

import static io.kvpager.cluster.process.TestClusters.await;

/**
 * The nodes a test started in this JVM, closed after each test in the order they were added
 * (after the test's own {@code @AfterEach}): {@code @RegisterExtension final StartedNodes nodes = new StartedNodes();}.
 */
final class StartedNodes implements AfterEachCallback {

    private final List<ClusterNode> nodes = new CopyOnWriteArrayList<>();

    /** Closes {@code node} after the test; returns it. */
    ClusterNode add(ClusterNode node) {
        nodes.add(node);
        return node;
    }

    /** The node added last. */
    ClusterNode last() {
        return nodes.getLast();
    }

    /** No longer closes {@code node} after the test (the test closed it or killed it itself). */
    void remove(ClusterNode node) {
        nodes.remove(node);
    }

    @Override
    public void afterEach(ExtensionContext context) {
        for (ClusterNode node : nodes) {
            await(node.close());
        }
        nodes.clear();
    }
}
