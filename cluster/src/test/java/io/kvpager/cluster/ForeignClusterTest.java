package io.kvpager.cluster;

import io.kvpager.cluster.process.TestClusters;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.util.List;
import java.util.concurrent.TimeUnit;

import static io.kvpager.cluster.process.TestClusters.await;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * A node told to join through members of a cluster with another name does not start and serve
 * alone: it fails naming its cluster name and the members that answered for another, and leaves
 * nothing running. The first node of a cluster, which joins through itself, starts as ever.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class ForeignClusterTest {

    private ClusterNode here;

    @AfterEach
    void tearDown() {
        if (here != null) {
            await(here.close());
        }
    }

    @Test
    void aNodeWhoseJoinMembersAllAnswerForAnotherClusterFailsInsteadOfServingAlone() {
        String real = TestClusters.freshName("kvpager-real");
        here = TestClusters.startHere(real);
        assertThat(here.members()).isEqualTo(1);

        String wrong = TestClusters.freshName("kvpager-wrong");
        ClusterNodeOptions options = TestClusters.nodeOptions(wrong, here.memberAddress());
        assertThatThrownBy(() -> ClusterNode.start(options).await(60, TimeUnit.SECONDS))
                .isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("cluster name '" + wrong + "'")
                .hasMessageContaining(here.memberAddress() + " answered with another cluster name")
                .hasMessageContaining("would serve alone");
        // the real cluster never saw it join, and is whole
        assertThat(here.members()).isEqualTo(1);

        // a node of the same name, through the same member, joins
        ClusterNode same = await(ClusterNode.start(TestClusters.nodeOptions(real, here.memberAddress())));
        try {
            assertThat(same.members()).isEqualTo(2);
        } finally {
            await(same.close());
        }
    }

    @Test
    void aNodeThatJoinsThroughNothingButItselfStartsAlone() {
        ClusterNodeOptions first = TestClusters.nodeOptions(TestClusters.freshName("kvpager-first"), null);
        here = await(ClusterNode.start(first));
        assertThat(here.members()).isEqualTo(1);
        assertThat(first.getMembers()).hasSize(1);
        assertThat(List.of(here.memberAddress())).containsExactlyElementsOf(first.getMembers());
    }
}
