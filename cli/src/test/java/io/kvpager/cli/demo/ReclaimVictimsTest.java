package io.kvpager.cli.demo;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.List;
import org.junit.jupiter.api.Test;

class ReclaimVictimsTest {

    private static final int BLOCKS_PER_PAGE = 4;
    private static final int BLOCK_TOKENS = 16;

    /** A request admitted at {@code arrivalMs} into {@code blocks}, with {@code written} tokens of its context written. */
    private static ServedRequest running(int id, long arrivalMs, int[] blocks, int written) {
        ServedRequest request = new ServedRequest(new TraceRequest(id, 0, arrivalMs, blocks.length * BLOCK_TOKENS - 1, 50));
        request.reserve(blocks);
        if (written > 0) {
            request.advance(written, new int[0]);
        }
        return request;
    }

    @Test
    void preemptsTheRequestStillPrefillingBeforeOneThatDecodes() {
        // page 0: an old request whose whole context is written; page 1: a newer one just admitted
        ServedRequest decoding = running(1, 100, new int[] {0, 1, 2, 3}, 63);
        ServedRequest prefilling = running(2, 50, new int[] {4, 5, 6, 7}, 0);
        assertThat(ReclaimVictims.choose(List.of(decoding, prefilling), BLOCKS_PER_PAGE, 1)).containsExactly(prefilling);
    }

    @Test
    void amongEqualCostsEmptiesTheEmptiestPageWithEveryHolder() {
        // page 0 full: a and b share it; page 1 holds c's two blocks and b's last one
        ServedRequest a = running(1, 10, new int[] {0, 1}, 31);
        ServedRequest b = running(2, 20, new int[] {2, 3, 4}, 47);
        ServedRequest c = running(3, 30, new int[] {5, 6}, 31);
        // page 1 has 3 blocks, page 0 has 4: page 1 first, preempting c (latest) and b
        assertThat(ReclaimVictims.choose(List.of(a, b, c), BLOCKS_PER_PAGE, 1)).containsExactly(c, b);
    }

    @Test
    void countsThePagesEmptiedNotTheBlocksFreed() {
        // a (prefilling) holds 10 blocks: all of page 0, three of page 1 and three of page 2, whose last
        // blocks are b's and d's
        ServedRequest a = running(1, 10, new int[] {0, 1, 2, 3, 4, 5, 6, 8, 9, 10}, 0);
        ServedRequest b = running(2, 20, new int[] {7}, 15);
        ServedRequest d = running(3, 30, new int[] {11}, 15);
        // a's page first (it costs nothing): its 10 blocks are more than two pages' worth, but only page 0
        // empties; then page 2 (tied with page 1, the higher first), with d
        assertThat(ReclaimVictims.choose(List.of(a, b, d), BLOCKS_PER_PAGE, 2)).containsExactly(a, d);
        assertThat(ReclaimVictims.choose(List.of(a, b, d), BLOCKS_PER_PAGE, 3)).containsExactly(a, d, b);
    }

    @Test
    void sparesAVictimThatALaterPageMadeNeedless() {
        // page 0: x and y, both prefilling (cheapest); pages 1 and 2: z alone, decoding, which empties two
        ServedRequest x = running(1, 10, new int[] {0, 1}, 0);
        ServedRequest y = running(2, 20, new int[] {2, 3}, 0);
        ServedRequest z = running(3, 30, new int[] {4, 5, 6, 7, 8, 9, 10, 11}, 100);
        // page 0 first empties one page; two are asked, so page 1 next, with z, which empties pages 1 and 2:
        // two pages without x and y, who are spared
        assertThat(ReclaimVictims.choose(List.of(x, y, z), BLOCKS_PER_PAGE, 2)).containsExactly(z);
        // three asked: every page, every holder
        assertThat(ReclaimVictims.choose(List.of(x, y, z), BLOCKS_PER_PAGE, 3)).containsExactly(y, x, z);
    }

    @Test
    void takesEverythingWhenAskedForMoreThanItHolds() {
        ServedRequest a = running(1, 10, new int[] {0, 1}, 31);
        ServedRequest b = running(2, 20, new int[] {4, 5}, 0);
        assertThat(ReclaimVictims.choose(List.of(a, b), BLOCKS_PER_PAGE, 100)).containsExactlyInAnyOrder(a, b);
        assertThat(ReclaimVictims.choose(List.of(), BLOCKS_PER_PAGE, 100)).isEmpty();
    }

    @Test
    void nothingWhenNothingIsAsked() {
        ServedRequest a = running(1, 10, new int[] {0, 1}, 31);
        assertThat(ReclaimVictims.choose(List.of(a), BLOCKS_PER_PAGE, 0)).isEmpty();
    }

    @Test
    void refusesAPageOfNoBlocks() {
        assertThatThrownBy(() -> ReclaimVictims.choose(List.of(), 0, 1)).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("at least one block");
    }
}
