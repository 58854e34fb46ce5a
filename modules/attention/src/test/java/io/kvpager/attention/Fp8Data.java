package io.kvpager.attention;

import java.util.SplittableRandom;

/**
 * K and V rows for the FP8 accuracy checks, {@code [token][head][dim]} as bf16 rounds them:
 * uniform in [-1, 1), or heavy-tailed (Student's t with 3 degrees of freedom) with a few channels
 * per head carrying outliers 20 times the rest, as real K caches have.
 */
final class Fp8Data {

    private Fp8Data() {
    }

    static float[][][] uniform(int tokens, int heads, int dims, SplittableRandom random) {
        float[][][] x = new float[tokens][heads][dims];
        for (float[][] token : x) {
            for (float[] row : token) {
                for (int d = 0; d < dims; d++) {
                    row[d] = bf16(random.nextDouble(-1, 1));
                }
            }
        }
        return x;
    }

    static float[][][] heavyTailed(int tokens, int heads, int dims, SplittableRandom random) {
        boolean[][] outlier = new boolean[heads][dims];
        for (int h = 0; h < heads; h++) {
            for (int k = 0; k < 4; k++) {
                outlier[h][random.nextInt(dims)] = true;
            }
        }
        float[][][] x = new float[tokens][heads][dims];
        for (float[][] token : x) {
            for (int h = 0; h < heads; h++) {
                for (int d = 0; d < dims; d++) {
                    double t = studentT3(random) * 0.3;
                    token[h][d] = bf16(outlier[h][d] ? 20 * t + 5 : t);
                }
            }
        }
        return x;
    }

    /** Student's t with 3 degrees of freedom: a normal over the root of a chi-square of 3 over 3. */
    private static double studentT3(SplittableRandom random) {
        double chi = 0;
        for (int i = 0; i < 3; i++) {
            double n = gaussian(random);
            chi += n * n;
        }
        return gaussian(random) / Math.sqrt(chi / 3);
    }

    private static double gaussian(SplittableRandom random) {
        double u = 1 - random.nextDouble();
        return Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * random.nextDouble());
    }

    static float bf16(double value) {
        return KvDtype.BF16.decode(KvDtype.BF16.encode((float) value));
    }
}
