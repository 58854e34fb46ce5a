package io.kvpager.internal.membership;

import io.vertx.core.Context;
import io.vertx.core.Promise;
import io.vertx.core.Vertx;
import io.vertx.core.spi.cluster.ClusterManager;
import io.vertx.core.spi.cluster.NodeListener;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.lang.reflect.Proxy;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicReference;

import static io.kvpager.cache.SimPool.await;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * A node that leaves is told gone from the cluster manager's member list, ahead of the node
 * listener, which Vert.x's Hazelcast cluster manager calls only after its clean-up; and each
 * departure is told once, whichever of the two hears it first. The cluster manager here is a
 * stand-in whose member list the test sets, and whose node listener the test calls.
 */
class ClusterMembershipWatchTest {

    private Vertx vertx;
    private Context context;
    private final List<String> members = new CopyOnWriteArrayList<>(List.of("self", "a", "b", "c"));
    private final AtomicReference<NodeListener> listener = new AtomicReference<>();
    /** While set, reading the member list fails, as it does while the member stops or restarts. */
    private volatile boolean listFails;
    private final List<String> left = new CopyOnWriteArrayList<>();
    private final List<String> changed = new CopyOnWriteArrayList<>();
    private ClusterMembership membership;

    @BeforeEach
    void setUp() {
        vertx = Vertx.vertx();
        context = vertx.getOrCreateContext();
        membership = ClusterMembership.of(manager());
        membership.subscribe(context, left::add);
        membership.subscribeChanges(context, () -> changed.add("change"));
    }

    @AfterEach
    void tearDown() {
        await(vertx.close());
    }

    /** A cluster manager that answers its node id, its member list and takes a node listener; nothing else is called here. */
    private ClusterManager manager() {
        return (ClusterManager) Proxy.newProxyInstance(getClass().getClassLoader(), new Class<?>[] {ClusterManager.class},
                (proxy, method, args) -> switch (method.getName()) {
                    case "getNodeId" -> "self";
                    case "getNodes" -> {
                        if (listFails) {
                            throw new IllegalStateException("a test: the member is not running");
                        }
                        yield List.copyOf(members);
                    }
                    case "nodeListener" -> {
                        listener.set((NodeListener) args[0]);
                        yield null;
                    }
                    case "hashCode" -> System.identityHashCode(proxy);
                    case "equals" -> proxy == args[0];
                    case "toString" -> "a stand-in cluster manager";
                    default -> throw new UnsupportedOperationException(method.getName());
                });
    }

    /** Waits until every notice sent to the subscribers' context so far has been delivered. */
    private void delivered() {
        Promise<Void> marker = Promise.promise();
        context.runOnContext(v -> marker.complete());
        await(marker.future());
    }

    @Test
    void aNodeMissingFromTheMemberListIsToldGoneOnceAndTheListenersNoticeOnlyTellsTheChange() {
        membership.readMembers();
        members.remove("a");
        membership.readMembers();
        delivered();
        assertThat(left).as("told from the member list, before the node listener spoke").containsExactly("a");
        assertThat(changed).hasSize(1);

        membership.readMembers();
        listener.get().nodeLeft("a");
        delivered();
        assertThat(left).as("told once").containsExactly("a");
        assertThat(changed).as("the listener's notice: the registry is clean now, the books are worth another look").hasSize(2);

        // a departure the reads did not see (no read since) is told by the node listener, as before
        members.remove("b");
        listener.get().nodeLeft("b");
        delivered();
        assertThat(left).containsExactly("a", "b");
        membership.readMembers();
        delivered();
        assertThat(left).as("the next read does not tell it again").containsExactly("a", "b");
    }

    @Test
    void aNodeThatSaidItIsLeavingIsToldOnceWhicheverHearsItGoFirst() {
        membership.readMembers();
        membership.nodeLeaving("c");
        assertThat(membership.nodes()).containsExactlyInAnyOrder("self", "a", "b");
        members.remove("c");
        membership.readMembers();
        listener.get().nodeLeft("c");
        delivered();
        assertThat(left).containsExactly("c");

        // the node listener first (seen in a test's log: its notice came 20 ms before the next read)
        membership.nodeLeaving("b");
        members.remove("b");
        listener.get().nodeLeft("b");
        membership.readMembers();
        delivered();
        assertThat(left).containsExactly("c", "b");
        assertThat(changed).as("a member that said it was leaving changes nothing more when it goes").isEmpty();
    }

    @Test
    void aNodeBackAfterAMergeIsToldGoneAgainWhenItLeavesAgain() {
        membership.readMembers();
        members.remove("a");
        membership.readMembers();
        listener.get().nodeLeft("a");
        members.add("a");
        listener.get().nodeAdded("a");
        membership.readMembers();
        members.remove("a");
        membership.readMembers();
        delivered();
        assertThat(left).containsExactly("a", "a");

        // told by the read, then back before the listener spoke of either: the listener's late notices tell nothing twice
        members.add("a");
        membership.readMembers();
        listener.get().nodeLeft("a");
        listener.get().nodeAdded("a");
        delivered();
        assertThat(left).containsExactly("a", "a");
    }

    @Test
    void whileDisplacedOrStoppingTheMemberListTellsNothing() {
        membership.readMembers();
        membership.displaced("a test: the others counted this node gone");
        members.removeAll(List.of("a", "b", "c"));
        membership.readMembers();
        members.addAll(List.of("a", "b"));
        membership.rejoined();
        membership.readMembers();
        delivered();
        assertThat(left).as("a list rebuilt in a merge is not a departure").isEmpty();
        // the node listener tells what the rebuilt list lacks
        listener.get().nodeLeft("c");
        delivered();
        assertThat(left).containsExactly("c");

        membership.stopping();
        members.remove("a");
        membership.readMembers();
        delivered();
        assertThat(left).containsExactly("c");
    }

    @Test
    void aReadThatFailsIsNoDeparture() {
        membership.readMembers();
        listFails = true;
        members.remove("a");
        membership.readMembers();
        listFails = false;
        membership.readMembers();
        delivered();
        assertThat(left).as("what changed while the list could not be read is the node listener's to tell").isEmpty();
        listener.get().nodeLeft("a");
        delivered();
        assertThat(left).containsExactly("a");
    }

    @Test
    void watchingReadsTheListEveryFewMillisecondsOnItsOwn() {
        membership.watchMembers(vertx);
        membership.watchMembers(vertx);
        // b goes and comes back at each look until the watch has told it gone: a read has to see it before it goes
        await().atMost(Duration.ofSeconds(10)).pollInterval(Duration.ofMillis(ClusterMembership.WATCH_MS * 3 / 2)).until(() -> {
            if (left.contains("b")) {
                return true;
            }
            if (!members.remove("b")) {
                members.add("b");
            }
            return false;
        });
        delivered();
        assertThat(left).containsExactly("b");
    }
}
