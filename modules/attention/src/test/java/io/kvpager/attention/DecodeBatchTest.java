package io.kvpager.attention;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.kvpager.Geometry;
import io.kvpager.Layout;
import org.junit.jupiter.api.Test;

class DecodeBatchTest {

    private static final AttentionShape SHAPE = new AttentionShape(8, 2, 128, 16, KvDtype.BF16);
    private static final Geometry GEOMETRY = Geometry.of(2, 2, SHAPE.blockBytes(), 2, Layout.PAGE_MAJOR);

    private static GroupBlocks held(int... blocks) {
        GroupBlocks held = new GroupBlocks(GEOMETRY.totalBlocks());
        held.add(blocks);
        return held;
    }

    @Test
    void tablesAreFlattenedInOrderWithSharedAndOutOfOrderBlocks() {
        DecodeBatch batch = DecodeBatch.of(new int[][] {{9, 2, 5}, {9, 7}, {300}}, new int[] {33, 32, 1})
                .check(SHAPE, GEOMETRY, held(9, 2, 5, 7, 300));
        assertThat(batch.blocks()).containsExactly(9, 2, 5, 9, 7, 300);
        assertThat(batch.tableStart()).containsExactly(0, 3, 5, 6);
        assertThat(batch.tokens()).isEqualTo(66);
        assertThat(batch.maxLength()).isEqualTo(33);
        assertThat(batch.blockOf(0, 32, 16)).isEqualTo(5);
        assertThat(batch.blockOf(1, 31, 16)).isEqualTo(7);
        assertThat(batch.kvBytes(SHAPE)).isEqualTo(66L * 2 * 2 * 128 * 2);
    }

    @Test
    void aLengthBeyondItsTableIsRefused() {
        DecodeBatch batch = DecodeBatch.of(new int[][] {{1, 2}}, new int[] {33});
        assertThatThrownBy(() -> batch.check(SHAPE, GEOMETRY, held(1, 2)))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("sequence 0 has length 33 but its table of 2 block(s) holds 32 tokens");
    }

    @Test
    void blocksOutsideThePoolOrNotHeldAreRefused() {
        assertThatThrownBy(() -> DecodeBatch.of(new int[][] {{1, 512}}, new int[] {20}).check(SHAPE, GEOMETRY, held(1)))
                .hasMessageContaining("sequence 0, table entry 1: block 512 is outside the pool's 0..511");
        assertThatThrownBy(() -> DecodeBatch.of(new int[][] {{1}, {1, -1}}, new int[] {1, 17}).check(SHAPE, GEOMETRY, held(1)))
                .hasMessageContaining("sequence 1, table entry 1: block -1 is outside");
        assertThatThrownBy(() -> DecodeBatch.of(new int[][] {{1, 3}}, new int[] {20}).check(SHAPE, GEOMETRY, held(1)))
                .hasMessageContaining("block 3 is not allocated to this group");
    }

    @Test
    void malformedBatchesAreRefused() {
        assertThatThrownBy(() -> DecodeBatch.of(new int[][] {{1}}, new int[] {1, 2})).hasMessageContaining("1 block tables but 2 lengths");
        assertThatThrownBy(() -> DecodeBatch.of(new int[0][], new int[0])).hasMessageContaining("1..65535 sequences, got 0");
        assertThatThrownBy(() -> DecodeBatch.of(new int[][] {{1}}, new int[] {0})).hasMessageContaining("sequence 0 has length 0");
        assertThatThrownBy(() -> DecodeBatch.of(new int[][] {null}, new int[] {1})).hasMessageContaining("sequence 0 has no block table");
    }

    @Test
    void theShapeMustFitTheCacheAndTheHeldBlocksItsPool() {
        DecodeBatch batch = DecodeBatch.of(new int[][] {{1}}, new int[] {1});
        assertThatThrownBy(() -> batch.check(new AttentionShape(8, 2, 64, 16, KvDtype.BF16), GEOMETRY, held(1)))
                .hasMessageContaining("blocks are 8192 bytes").hasMessageContaining("make 4096");
        assertThatThrownBy(() -> batch.check(SHAPE, GEOMETRY, new GroupBlocks(10))).hasMessageContaining("pool of 10 blocks");
    }

    @Test
    void theArraysAreCopiedBothWays() {
        int[][] tables = {{4, 5}};
        int[] lengths = {20};
        DecodeBatch batch = DecodeBatch.of(tables, lengths);
        tables[0][0] = 99;
        lengths[0] = 1;
        batch.blocks()[0] = 77;
        assertThat(batch.blocks()).containsExactly(4, 5);
        assertThat(batch.lengths()).containsExactly(20);
    }
}
