package io.kvpager.impl.broker;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

/** A write refused on the smaller side of a split is told apart from other failures, at any depth of causes. */
class MinoritySideTest {

    /** Named as the cluster manager's own, which this module does not see. */
    static final class SplitBrainProtectionException extends RuntimeException {
        SplitBrainProtectionException(String message) {
            super(message);
        }
    }

    @Test
    void aQuorumRefusalIsFoundInTheCausesAndNothingElseIs() {
        RuntimeException quorum = new SplitBrainProtectionException("split brain protection kvpager.books-quorum is not met");
        assertThat(GpuLease.onMinoritySide(quorum)).isTrue();
        assertThat(GpuLease.onMinoritySide(new IllegalStateException("wrapped", new RuntimeException("again", quorum)))).isTrue();
        assertThat(GpuLease.onMinoritySide(new IllegalStateException("the broker did not answer"))).isFalse();
        assertThat(GpuLease.onMinoritySide(null)).isFalse();
    }
}
