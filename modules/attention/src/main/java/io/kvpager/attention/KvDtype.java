package io.kvpager.attention;

/** The element type of queries, keys, values and output: two bytes each. */
public enum KvDtype {
    FP16,
    BF16;

    /** Bytes per element. */
    public int bytes() {
        return 2;
    }

    /** The element's bits for {@code value}, rounded to nearest even. */
    public short encode(float value) {
        return this == FP16 ? Float.floatToFloat16(value) : bf16(value);
    }

    /** The value of an element's bits. */
    public float decode(short bits) {
        return this == FP16 ? Float.float16ToFloat(bits) : Float.intBitsToFloat((bits & 0xffff) << 16);
    }

    private static short bf16(float value) {
        int bits = Float.floatToRawIntBits(value);
        if (Float.isNaN(value)) {
            return (short) ((bits >>> 16) | 0x40);
        }
        int rounded = bits + 0x7fff + ((bits >>> 16) & 1);
        return (short) (rounded >>> 16);
    }
}
