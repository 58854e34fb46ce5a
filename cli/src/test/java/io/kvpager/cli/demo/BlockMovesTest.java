package io.kvpager.cli.demo;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import org.junit.jupiter.api.RepeatedTest;
import org.junit.jupiter.api.Test;

class BlockMovesTest {

    private static final int BLOCKS_PER_PAGE = 4;

    private static ServedRequest holding(int id, int... blocks) {
        ServedRequest request = new ServedRequest(new TraceRequest(id, 0, id, blocks.length * 16 - 1, 50));
        request.reserve(blocks);
        return request;
    }

    @Test
    void movesTheEmptiestPageIntoTheFullestPagesFreeBlocks() {
        // page 0: 3 of a's blocks; page 1: b's 2; page 2: c's 1, the emptiest
        ServedRequest a = holding(1, 0, 1, 2);
        ServedRequest b = holding(2, 4, 5);
        ServedRequest c = holding(3, 8);
        BlockMoves.Plan plan = BlockMoves.plan(List.of(a, b, c), BLOCKS_PER_PAGE, 1);
        assertThat(plan.emptied()).containsExactly(2);
        // into page 0, the fullest, near a block a holds there
        assertThat(plan.byDestination()).containsOnlyKeys(0);
        assertThat(plan.byDestination().get(0)).containsExactly(new BlockMoves.Move(c, 0, 8, 0));
        assertThat(plan.heldIn().get(0) / BLOCKS_PER_PAGE).isEqualTo(0);
    }

    @Test
    void emptiesNoMorePagesThanTheOthersFreeBlocksHold() {
        // pages 0 to 2 hold 2 blocks each: emptying one moves 2 blocks into the 4 free in the other two;
        // emptying two would move 4 into the last page's 2 free blocks
        ServedRequest a = holding(1, 0, 1);
        ServedRequest b = holding(2, 4, 5);
        ServedRequest c = holding(3, 8, 9);
        assertThat(BlockMoves.plan(List.of(a, b, c), BLOCKS_PER_PAGE, 5).emptied()).containsExactly(2);
        // pages 0 and 1 hold a block each, page 2 two: both single blocks fit into page 2
        ServedRequest d = holding(4, 0);
        ServedRequest e = holding(5, 4);
        ServedRequest f = holding(6, 8, 9);
        BlockMoves.Plan two = BlockMoves.plan(List.of(d, e, f), BLOCKS_PER_PAGE, 5);
        assertThat(two.emptied()).containsExactly(1, 0);
        assertThat(two.byDestination()).containsOnlyKeys(2);
        // full pages leave no room at all
        ServedRequest full = holding(4, 0, 1, 2, 3);
        ServedRequest nearlyEmpty = holding(5, 4);
        assertThat(BlockMoves.plan(List.of(full, nearlyEmpty), BLOCKS_PER_PAGE, 1)).isEqualTo(BlockMoves.Plan.NONE);
    }

    @Test
    void neverEmptiesTheLastPageNorMoreThanAsked() {
        ServedRequest alone = holding(1, 0);
        assertThat(BlockMoves.plan(List.of(alone), BLOCKS_PER_PAGE, 1)).isEqualTo(BlockMoves.Plan.NONE);
        ServedRequest a = holding(2, 0);
        ServedRequest b = holding(3, 4);
        ServedRequest c = holding(4, 8);
        assertThat(BlockMoves.plan(List.of(a, b, c), BLOCKS_PER_PAGE, 1).emptied()).hasSize(1);
        assertThat(BlockMoves.plan(List.of(a, b, c), BLOCKS_PER_PAGE, 0)).isEqualTo(BlockMoves.Plan.NONE);
    }

    @Test
    void refusesAPageOfNoBlocks() {
        assertThatThrownBy(() -> BlockMoves.plan(List.of(), 0, 1)).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("at least one block");
    }

    /**
     * Random holdings: applying the plan leaves every request holding distinct blocks, each moved one
     * into a block free before, no destination overfilled, and the emptied pages holding nothing.
     */
    @RepeatedTest(200)
    void applyingAPlanEmptiesItsPagesAndOverfillsNone(org.junit.jupiter.api.RepetitionInfo repetition) {
        Random random = new Random(repetition.getCurrentRepetition());
        int pages = 2 + random.nextInt(8);
        List<Integer> free = new ArrayList<>();
        for (int b = 0; b < pages * BLOCKS_PER_PAGE; b++) {
            free.add(b);
        }
        java.util.Collections.shuffle(free, random);
        List<ServedRequest> running = new ArrayList<>();
        int id = 0;
        while (!free.isEmpty() && random.nextInt(6) > 0) {
            int n = 1 + random.nextInt(Math.min(free.size(), 5));
            int[] blocks = new int[n];
            for (int i = 0; i < n; i++) {
                blocks[i] = free.removeLast();
            }
            running.add(holding(++id, blocks));
        }
        Set<Integer> held = new HashSet<>();
        running.forEach(r -> {
            for (int b : r.blocks()) {
                held.add(b);
            }
        });
        long asked = 1 + random.nextInt(pages);
        BlockMoves.Plan plan = BlockMoves.plan(running, BLOCKS_PER_PAGE, asked);
        assertThat(plan.emptied().size()).isLessThanOrEqualTo((int) asked);
        // apply it: each destination's moves take free blocks of that page
        Map<Integer, Integer> nextFree = new HashMap<>();
        for (Map.Entry<Integer, List<BlockMoves.Move>> e : plan.byDestination().entrySet()) {
            int page = e.getKey();
            assertThat(plan.emptied()).doesNotContain(page);
            assertThat(held).contains(plan.heldIn().get(page));
            assertThat(plan.heldIn().get(page) / BLOCKS_PER_PAGE).isEqualTo(page);
            for (BlockMoves.Move move : e.getValue()) {
                int to = -1;
                for (int b = nextFree.getOrDefault(page, page * BLOCKS_PER_PAGE); b < (page + 1) * BLOCKS_PER_PAGE; b++) {
                    if (!held.contains(b)) {
                        to = b;
                        break;
                    }
                }
                assertThat(to).as("a free block in page %d for %s", page, move).isNotNegative();
                nextFree.put(page, to + 1);
                held.add(to);
                held.remove(move.from());
                move.request().moveBlock(move.index(), move.from(), to);
            }
        }
        for (int page : plan.emptied()) {
            for (ServedRequest r : running) {
                for (int b : r.blocks()) {
                    assertThat(b / BLOCKS_PER_PAGE).isNotEqualTo(page);
                }
            }
        }
        Set<Integer> after = new HashSet<>();
        running.forEach(r -> {
            for (int b : r.blocks()) {
                assertThat(after.add(b)).as("block %d held once", b).isTrue();
            }
        });
        assertThat(plan.moves()).isEqualTo(plan.byDestination().values().stream().mapToInt(List::size).sum());
    }

    @Test
    void aMoveOfABlockTheRequestDoesNotHoldAtThatPlaceIsRefused() {
        ServedRequest a = holding(1, 0, 1);
        assertThatThrownBy(() -> a.moveBlock(1, 0, 7)).isInstanceOf(IllegalStateException.class).hasMessageContaining("no block 0 at 1");
        assertThat(a.blocks()).containsExactly(0, 1);
    }
}
