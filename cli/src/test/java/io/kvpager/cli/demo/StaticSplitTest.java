package io.kvpager.cli.demo;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;

class StaticSplitTest {

    @Test
    void countsServedAllocationsWhoseDemandExceedsTheShare() {
        // 10 blocks a page, 100 bytes a page, a share of 300 bytes: 3 pages, 30 blocks.
        StaticSplit split = new StaticSplit(300, 10, 100);
        split.served(1, 10);
        split.served(1, 30);
        split.served(2, 31);
        split.served(2, 45);
        split.served(3, 50);
        split.served(1, 20);
        assertThat(split.refusedAllocs()).isEqualTo(3);
        assertThat(split.refusedRequests()).isEqualTo(2);
        assertThat(split.peakDemandBytes()).isEqualTo(500);
    }

    @Test
    void refusesNothingWithinTheShare() {
        StaticSplit split = new StaticSplit(1000, 10, 100);
        for (int blocks = 1; blocks <= 100; blocks++) {
            split.served(blocks, blocks);
        }
        assertThat(split.refusedAllocs()).isZero();
        assertThat(split.refusedRequests()).isZero();
    }

    @Test
    void refusesBadSizes() {
        assertThatThrownBy(() -> new StaticSplit(100, 0, 10)).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> new StaticSplit(-1, 1, 10)).isInstanceOf(IllegalArgumentException.class);
    }
}
