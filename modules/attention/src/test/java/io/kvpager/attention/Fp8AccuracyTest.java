package io.kvpager.attention;

import static org.assertj.core.api.Assertions.assertThat;

import io.kvpager.KvFormat;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

/**
 * What FP8 pages cost in accuracy, on the CPU in double precision: decode attention over K and V
 * quantized as {@code kv_append_fp8} quantizes them (a scale per token and KV head) against the
 * same attention over the bf16 values, on uniform data and on heavy-tailed data with outlier
 * channels; and beside it the other scale granularity, one scale per block and KV head (the
 * block's largest magnitude, known only once the block is full), for the choice docs/attention.md
 * records. 4 sequences of 2048 tokens, 32 query heads over 8 KV heads of 128, 16-token blocks.
 */
class Fp8AccuracyTest {

    static final int SEQUENCES = 4;
    static final int LENGTH = 2048;
    static final int BLOCK = 16;
    static final AttentionShape SHAPE = new AttentionShape(32, 8, 128, BLOCK, KvDtype.BF16, KvFormat.FP8);

    record Error(double maxAbs, double cosine, double relativeL2) {
    }

    @Test
    void perTokenScalesKeepCosineAbove0999OnUniformData() {
        Error[] errors = compare(false);
        System.out.printf("fp8 vs bf16 attention, uniform data: per (token, head) %s; per (block, head) %s%n",
                errors[0], errors[1]);
        assertThat(errors[0].cosine()).isGreaterThanOrEqualTo(0.999);
    }

    @Test
    void perTokenScalesKeepCosineAbove0999OnHeavyTailedDataWithOutlierChannels() {
        Error[] errors = compare(true);
        System.out.printf("fp8 vs bf16 attention, heavy-tailed data with outlier channels: per (token, head) %s; "
                + "per (block, head) %s%n", errors[0], errors[1]);
        assertThat(errors[0].cosine()).isGreaterThanOrEqualTo(0.999);
        assertThat(errors[0].maxAbs()).as("per token no worse than per block").isLessThanOrEqualTo(errors[1].maxAbs() * 1.5);
    }

    /** {per token, per block} errors against bf16 attention. */
    static Error[] compare(boolean heavyTailed) {
        SplittableRandom random = new SplittableRandom(heavyTailed ? 29 : 17);
        int tokens = SEQUENCES * LENGTH;
        int heads = SHAPE.kvHeads();
        int dims = SHAPE.headSize();
        float[][][][] kv = new float[2][][][];
        for (int b = 0; b < 2; b++) {
            kv[b] = heavyTailed ? Fp8Data.heavyTailed(tokens, heads, dims, random) : Fp8Data.uniform(tokens, heads, dims, random);
        }
        double[][][][] perToken = new double[2][tokens][heads][dims];
        double[][][][] perBlock = new double[2][tokens][heads][dims];
        byte[] codes = new byte[dims * BLOCK];
        for (int b = 0; b < 2; b++) {
            for (int t = 0; t < tokens; t++) {
                for (int h = 0; h < heads; h++) {
                    float scale = E4m3.quantize(kv[b][t][h], 0, dims, codes, 0);
                    for (int d = 0; d < dims; d++) {
                        perToken[b][t][h][d] = E4m3.decode(codes[d]) * scale;
                    }
                }
            }
            for (int first = 0; first < tokens; first += BLOCK) {
                for (int h = 0; h < heads; h++) {
                    float[] block = new float[BLOCK * dims];
                    for (int t = 0; t < BLOCK; t++) {
                        System.arraycopy(kv[b][first + t][h], 0, block, t * dims, dims);
                    }
                    float scale = E4m3.quantize(block, 0, block.length, codes, 0);
                    for (int t = 0; t < BLOCK; t++) {
                        for (int d = 0; d < dims; d++) {
                            perBlock[b][first + t][h][d] = E4m3.decode(codes[t * dims + d]) * scale;
                        }
                    }
                }
            }
        }
        int[][] tables = new int[SEQUENCES][LENGTH / BLOCK];
        int[] lengths = new int[SEQUENCES];
        for (int s = 0; s < SEQUENCES; s++) {
            for (int k = 0; k < LENGTH / BLOCK; k++) {
                tables[s][k] = s * (LENGTH / BLOCK) + k;
            }
            lengths[s] = LENGTH;
        }
        DecodeBatch batch = DecodeBatch.of(tables, lengths);
        double[][][] query = new double[SEQUENCES][SHAPE.queryHeads()][dims];
        for (double[][] sequence : query) {
            for (double[] head : sequence) {
                for (int d = 0; d < dims; d++) {
                    head[d] = Fp8Data.bf16(random.nextDouble(-4, 4));
                }
            }
        }
        double[][][] exact = ReferenceAttention.compute(SHAPE, batch, query,
                (buffer, block, token, head, dim) -> kv[buffer][block * BLOCK + token][head][dim]);
        double[][][] tokenScaled = ReferenceAttention.compute(SHAPE, batch, query,
                (buffer, block, token, head, dim) -> perToken[buffer][block * BLOCK + token][head][dim]);
        double[][][] blockScaled = ReferenceAttention.compute(SHAPE, batch, query,
                (buffer, block, token, head, dim) -> perBlock[buffer][block * BLOCK + token][head][dim]);
        return new Error[] {error(tokenScaled, exact), error(blockScaled, exact)};
    }

    static Error error(double[][][] actual, double[][][] expected) {
        double maxAbs = 0;
        double dot = 0;
        double aa = 0;
        double ee = 0;
        double diff = 0;
        for (int s = 0; s < actual.length; s++) {
            for (int h = 0; h < actual[s].length; h++) {
                for (int d = 0; d < actual[s][h].length; d++) {
                    double a = actual[s][h][d];
                    double e = expected[s][h][d];
                    maxAbs = Math.max(maxAbs, Math.abs(a - e));
                    dot += a * e;
                    aa += a * a;
                    ee += e * e;
                    diff += (a - e) * (a - e);
                }
            }
        }
        return new Error(maxAbs, dot / Math.sqrt(aa * ee), Math.sqrt(diff / ee));
    }
}
