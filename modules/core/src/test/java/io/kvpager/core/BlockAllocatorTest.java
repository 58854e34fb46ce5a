package io.kvpager.core;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.Arrays;
import org.junit.jupiter.api.Test;

class BlockAllocatorTest {

    private final BlockAllocator blocks = new BlockAllocator(4, 8);

    private int[] open(int page, int n) {
        int[] out = new int[n];
        assertThat(blocks.openAndTake(page, n, out, 0)).isEqualTo(n);
        return out;
    }

    private int[] take(int n) {
        int[] out = new int[n];
        assertThat(blocks.take(n, out, 0)).isEqualTo(n);
        return out;
    }

    private String state() {
        StringBuilder out = new StringBuilder();
        blocks.describe(out);
        return out.toString();
    }

    @Test
    void aFreshPageHandsOutItsBlocksInOrderWithGlobalIds() {
        assertThat(open(2, 3)).containsExactly(16, 17, 18);
        assertThat(blocks.usedBlocks()).isEqualTo(3);
        assertThat(blocks.partlyFreeBlocks()).isEqualTo(5);
        blocks.checkInvariants();
    }

    @Test
    void aRequestGoesToThePartlyUsedPageWithTheFewestFreeBlocksThatHoldsIt() {
        open(0, 3); // 5 free
        open(1, 6); // 2 free
        open(2, 5); // 3 free
        assertThat(Arrays.stream(take(2)).map(b -> b / 8)).containsOnly(1);
        assertThat(Arrays.stream(take(3)).map(b -> b / 8)).containsOnly(2);
        assertThat(Arrays.stream(take(4)).map(b -> b / 8)).containsOnly(0);
        assertThat(blocks.freeBlocks(0)).isEqualTo(1);
        blocks.checkInvariants();
    }

    @Test
    void aRequestThatFitsNowhereTakesTheEmptiestPageThenFitsTheRestBest() {
        open(0, 3); // 5 free
        open(1, 6); // 2 free
        open(2, 5); // 3 free
        int[] got = take(6);
        // 5 from page 0 (most free), then the 1 left fits best into page 1 (2 free); page 2 keeps its 3:
        // two pages touched, where filling the fullest first touched three
        assertThat(Arrays.stream(got).filter(b -> b / 8 == 0).count()).isEqualTo(5);
        assertThat(Arrays.stream(got).filter(b -> b / 8 == 1).count()).isEqualTo(1);
        assertThat(blocks.freeBlocks(2)).isEqualTo(3);
        assertThat(blocks.isOpen(0)).isTrue();
        assertThat(blocks.freeBlocks(0)).isZero();
        blocks.checkInvariants();
    }

    @Test
    void takingStopsWhenThePagesInUseRunOut() {
        open(0, 6);
        int[] out = new int[5];
        assertThat(blocks.take(5, out, 0)).isEqualTo(2);
        assertThat(blocks.partlyFreeBlocks()).isZero();
    }

    @Test
    void aPageWhoseLastBlockIsReleasedLeavesAndIsReported() {
        int[] got = open(3, 2);
        blocks.releaseAll(new int[] {got[0]});
        assertThat(blocks.emptied().isEmpty()).isTrue();
        blocks.releaseAll(new int[] {got[1]});
        assertThat(blocks.emptied().toArray()).containsExactly(3);
        assertThat(blocks.isOpen(3)).isFalse();
        assertThat(blocks.openPages()).isZero();
        assertThat(blocks.partlyFreeBlocks()).isZero();
        blocks.checkInvariants();
    }

    @Test
    void badReleasesFailWholeAndChangeNothing() {
        int[] got = open(0, 4);
        open(1, 2);
        blocks.releaseAll(new int[] {got[3]});
        String before = state();
        assertThatThrownBy(() -> blocks.releaseAll(new int[] {got[0], 32})).isInstanceOf(IllegalArgumentException.class)
                .hasMessage("block 32 is out of range 0..31");
        assertThatThrownBy(() -> blocks.releaseAll(new int[] {got[0], -1})).hasMessage("block -1 is out of range 0..31");
        assertThatThrownBy(() -> blocks.releaseAll(new int[] {got[1], got[0], got[1]}))
                .hasMessage("block " + got[1] + " is listed twice");
        assertThatThrownBy(() -> blocks.releaseAll(new int[] {got[0], got[3]})).hasMessage("block " + got[3] + " is not allocated");
        assertThatThrownBy(() -> blocks.releaseAll(new int[] {got[0], 20})).hasMessage("block 20 is not allocated");
        assertThat(state()).isEqualTo(before);
        blocks.checkInvariants();
    }

    @Test
    void claimedBlocksPutBackLeaveEveryPageAsItWas() {
        open(0, 5);
        open(1, 1);
        String before = state();
        int[] claimed = new int[10];
        assertThat(blocks.take(10, claimed, 0)).isEqualTo(10);
        blocks.releaseClaimed(claimed, 10);
        assertThat(state()).isEqualTo(before);
        blocks.checkInvariants();
    }

    @Test
    void aPageOfOneBlockIsEitherFullOrGone() {
        BlockAllocator single = new BlockAllocator(3, 1);
        int[] out = new int[1];
        single.openAndTake(1, 1, out, 0);
        assertThat(out).containsExactly(1);
        assertThat(single.take(1, out, 0)).isZero();
        single.releaseAll(new int[] {1});
        assertThat(single.emptied().toArray()).containsExactly(1);
        single.checkInvariants();
    }
}
