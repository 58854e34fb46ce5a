package io.kvpager.attention;

/**
 * The float8 e4m3 format of FP8 pages (1 sign, 4 exponent bits with bias 7, 3 mantissa bits;
 * finite values to ±448, subnormals down to 2⁻⁹, code 0x7f/0xff NaN, no infinities) and the
 * quantization {@code kv_append_fp8} applies, bit for bit: one token's row of one KV head
 * ({@code headSize} bf16 values) becomes {@code e4m3(x × (448 / amax))} per element, rounded to
 * nearest even and saturating at ±448, with the fp32 scale {@code amax / 448}; a row of zeros gets
 * scale 0. Its value is then {@code decode(element) × scale}.
 */
public final class E4m3 {

    /** The largest finite e4m3 value. */
    public static final float MAX = 448f;

    private E4m3() {
    }

    /** The e4m3 code of {@code value}: rounded to nearest even, saturating at ±448 (NaN stays NaN). */
    public static byte encode(float value) {
        if (Float.isNaN(value)) {
            return 0x7f;
        }
        int sign = (Float.floatToRawIntBits(value) >>> 31) << 7;
        double magnitude = Math.abs((double) value);
        if (magnitude >= MAX) {
            return (byte) (sign | 0x7e);
        }
        // the spacing of e4m3 values around magnitude: 2^(e - 3) for normals, 2^-9 below 2^-6
        int exponent = magnitude < 0x1p-6 ? -6 : Math.getExponent(magnitude);
        double quantum = Math.scalb(1.0, exponent - 3);
        double rounded = Math.rint(magnitude / quantum) * quantum;
        if (rounded == 0) {
            return (byte) sign;
        }
        int e = Math.getExponent(rounded);
        if (e < -6) {
            return (byte) (sign | (int) (rounded / 0x1p-9));
        }
        int mantissa = (int) ((rounded / Math.scalb(1.0, e) - 1) * 8);
        return (byte) (sign | (e + 7) << 3 | mantissa);
    }

    /** The value of e4m3 code {@code code}. */
    public static double decode(byte code) {
        int bits = code & 0xff;
        int exponent = (bits >>> 3) & 15;
        int mantissa = bits & 7;
        if (exponent == 15 && mantissa == 7) {
            return Double.NaN;
        }
        double magnitude = exponent == 0 ? mantissa * 0x1p-9 : (1 + mantissa / 8.0) * Math.scalb(1.0, exponent - 7);
        return (bits & 0x80) != 0 ? -magnitude : magnitude;
    }

    /**
     * Quantizes one row of {@code count} values from {@code offset}, as {@code kv_append_fp8} does:
     * writes the codes into {@code codes} from {@code codesOffset} and returns the scale.
     */
    public static float quantize(float[] values, int offset, int count, byte[] codes, int codesOffset) {
        float amax = 0f;
        for (int i = 0; i < count; i++) {
            amax = Math.max(amax, Math.abs(values[offset + i]));
        }
        float inverse = amax > 0f ? MAX / amax : 0f;
        for (int i = 0; i < count; i++) {
            codes[codesOffset + i] = encode(values[offset + i] * inverse);
        }
        return amax / MAX;
    }
}
