package io.kvpager.attention;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import org.junit.jupiter.api.Test;

class ReferenceAttentionTest {

    private static final AttentionShape SHAPE = new AttentionShape(4, 2, 64, 4, KvDtype.FP16);

    @Test
    void oneTokenGivesItsValueRow() {
        DecodeBatch batch = DecodeBatch.of(new int[][] {{7}}, new int[] {1});
        double[][][] out = ReferenceAttention.compute(SHAPE, batch, new double[1][4][64],
                (buffer, block, token, head, dim) -> buffer == KvTensors.VALUES ? block * 1000 + token * 100 + head * 10 + dim : 1);
        assertThat(out[0][0][3]).isEqualTo(7003.0);
        assertThat(out[0][1][3]).as("query head 1 reads KV head 0 (group of 2)").isEqualTo(7003.0);
        assertThat(out[0][2][5]).as("query head 2 reads KV head 1").isEqualTo(7015.0);
    }

    @Test
    void equalScoresAverageTheValuesOfTheSequenceOnly() {
        // Two blocks of 4 tokens, length 6: tokens 6 and 7 of the second block are not part of it.
        DecodeBatch batch = DecodeBatch.of(new int[][] {{3, 1}}, new int[] {6});
        double[][][] out = ReferenceAttention.compute(SHAPE, batch, new double[1][4][64],
                (buffer, block, token, head, dim) -> buffer == KvTensors.VALUES ? (block == 3 ? token : 10 + token) : 0);
        assertThat(out[0][0][0]).isCloseTo((0 + 1 + 2 + 3 + 10 + 11) / 6.0, within(1e-12));
    }

    @Test
    void theLargestScoreDominates() {
        DecodeBatch batch = DecodeBatch.of(new int[][] {{0}}, new int[] {2});
        double[][][] query = new double[1][4][64];
        query[0][0][0] = 80; // scores 80 / sqrt(64) = 10 apart
        double[][][] out = ReferenceAttention.compute(SHAPE, batch, query,
                (buffer, block, token, head, dim) -> buffer == KvTensors.KEYS ? (dim == 0 ? token : 0) : token);
        assertThat(out[0][0][0]).isCloseTo(1 / (1 + Math.exp(-10)), within(1e-12));
    }
}
