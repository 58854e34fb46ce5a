package io.kvpager.attention;

/**
 * Decode attention on the CPU in double precision, from the same elements the kernel reads: the
 * yardstick of the GPU tests, and a readable statement of what the kernel computes.
 */
public final class ReferenceAttention {

    /** One element of a block: K ({@code buffer 0}) or V ({@code 1}) of one token and KV head. */
    @FunctionalInterface
    public interface Blocks {
        double element(int buffer, int block, int token, int head, int dim);
    }

    private ReferenceAttention() {
    }

    /**
     * {@code out[s][h][d]} for every sequence {@code s} and query head {@code h}:
     * {@code Σ_t softmax_t(q[s][h]·K[t][h / group] / √D) · V[t][h / group][d]}.
     *
     * @param query {@code [sequence][queryHead][dim]}
     */
    public static double[][][] compute(AttentionShape shape, DecodeBatch batch, double[][][] query, Blocks blocks) {
        int dims = shape.headSize();
        double scale = 1.0 / Math.sqrt(dims);
        double[][][] out = new double[batch.sequences()][shape.queryHeads()][dims];
        for (int s = 0; s < batch.sequences(); s++) {
            int length = batch.length(s);
            double[] scores = new double[length];
            for (int h = 0; h < shape.queryHeads(); h++) {
                int head = h / shape.group();
                double max = Double.NEGATIVE_INFINITY;
                for (int t = 0; t < length; t++) {
                    int block = batch.blockOf(s, t, shape.blockTokens());
                    int within = t % shape.blockTokens();
                    double dot = 0;
                    for (int d = 0; d < dims; d++) {
                        dot += query[s][h][d] * blocks.element(KvTensors.KEYS, block, within, head, d);
                    }
                    scores[t] = dot * scale;
                    max = Math.max(max, scores[t]);
                }
                double sum = 0;
                for (int t = 0; t < length; t++) {
                    scores[t] = Math.exp(scores[t] - max);
                    sum += scores[t];
                }
                for (int t = 0; t < length; t++) {
                    int block = batch.blockOf(s, t, shape.blockTokens());
                    int within = t % shape.blockTokens();
                    double p = scores[t] / sum;
                    for (int d = 0; d < dims; d++) {
                        out[s][h][d] += p * blocks.element(KvTensors.VALUES, block, within, head, d);
                    }
                }
            }
        }
        return out;
    }
}
