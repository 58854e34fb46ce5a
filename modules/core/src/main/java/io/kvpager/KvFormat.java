package io.kvpager;

import java.util.Arrays;
import java.util.Locale;

/**
 * How a cache's blocks store K and V elements: what {@code kvDtype} names in the cache's options.
 *
 * <ul>
 *   <li>{@link #BF16}: two bytes per element, the model's 16-bit type (bf16 or fp16), the default.
 *   <li>{@link #FP8}: one byte per element, float8 e4m3 (4 exponent bits, 3 mantissa bits, finite
 *       range ±448), each token's row of one KV head scaled by its own fp32 scale
 *       ({@code amax / 448}); a block holds its elements token-major, then its scales, KV-head-major
 *       ({@code [head][token]}). A 2 MiB page then holds about twice the tokens.
 * </ul>
 */
public enum KvFormat {
    BF16(2, 0),
    FP8(1, Float.BYTES);

    private final int elementBytes;
    private final int scaleBytes;

    KvFormat(int elementBytes, int scaleBytes) {
        this.elementBytes = elementBytes;
        this.scaleBytes = scaleBytes;
    }

    /** Bytes of one element. */
    public int elementBytes() {
        return elementBytes;
    }

    /** Bytes of the scale of one token's row of one KV head: 0 where there is none. */
    public int scaleBytes() {
        return scaleBytes;
    }

    /** Bytes one token of {@code kvHeads} heads of {@code headSize} takes in one buffer, its scales included. */
    public long tokenBytes(int kvHeads, int headSize) {
        requirePositive(kvHeads, headSize, 1);
        return (long) kvHeads * ((long) headSize * elementBytes + scaleBytes);
    }

    /** Bytes of one block of {@code blockTokens} tokens in one buffer: the elements, then the scales. */
    public long blockBytes(int blockTokens, int kvHeads, int headSize) {
        requirePositive(kvHeads, headSize, blockTokens);
        return Math.multiplyExact(tokenBytes(kvHeads, headSize), blockTokens);
    }

    /** The option's spelling: {@code bf16} or {@code fp8}. */
    public String optionName() {
        return name().toLowerCase(Locale.ROOT);
    }

    /**
     * The format an option names, case-insensitively: {@code bf16} or {@code fp8} ({@code e4m3}
     * is accepted for the latter).
     *
     * @throws IllegalArgumentException naming what is accepted
     */
    public static KvFormat parse(String name) {
        if (name != null) {
            String key = name.strip().toLowerCase(Locale.ROOT);
            for (KvFormat format : values()) {
                if (format.optionName().equals(key)) {
                    return format;
                }
            }
            if (key.equals("e4m3")) {
                return FP8;
            }
        }
        throw new IllegalArgumentException("kvDtype must be one of "
                + Arrays.stream(values()).map(KvFormat::optionName).toList() + " (fp8 is e4m3), got "
                + (name == null ? "null" : "'" + name + "'"));
    }

    private static void requirePositive(int kvHeads, int headSize, int blockTokens) {
        if (kvHeads <= 0 || headSize <= 0 || blockTokens <= 0) {
            throw new IllegalArgumentException("kvHeads, headSize and blockTokens must be at least 1, got " + kvHeads
                    + ", " + headSize + " and " + blockTokens);
        }
    }
}
