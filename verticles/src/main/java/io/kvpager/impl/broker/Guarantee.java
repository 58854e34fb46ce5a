package io.kvpager.impl.broker;

import io.kvpager.cache.KvCacheOptions;
import io.vertx.core.json.JsonObject;

/**
 * What a pool asks as its guaranteed share of a GPU's budget: a number of bytes, a percent of the
 * budget, or an equal split of what the others' asks leave ({@link #SPLIT}). The bytes it comes to
 * depend on the GPU and the pools on it: {@link ShareArbiter#guarantees}.
 *
 * @param bytes the bytes asked, or -1
 * @param percent the percent asked, or -1
 */
public record Guarantee(long bytes, int percent) {

    /** No guarantee set: an equal split, among the pools that set none, of what the set ones leave. */
    public static final Guarantee SPLIT = new Guarantee(-1, -1);

    public Guarantee {
        if (bytes < -1 || percent < -1 || percent > 100 || (bytes >= 0 && percent >= 0)) {
            throw new IllegalArgumentException("a guarantee is bytes >= 0, or a percent in 0..100, or neither; got "
                    + bytes + " bytes and " + percent + " %");
        }
    }

    public static Guarantee ofBytes(long bytes) {
        return new Guarantee(bytes, -1);
    }

    public static Guarantee ofPercent(int percent) {
        return new Guarantee(-1, percent);
    }

    /** The guarantee the options ask. */
    public static Guarantee of(KvCacheOptions options) {
        if (options.getGuaranteeBytes() != null) {
            return ofBytes(options.getGuaranteeBytes());
        }
        return options.getGuaranteePercent() != null ? ofPercent(options.getGuaranteePercent()) : SPLIT;
    }

    public boolean split() {
        return bytes < 0 && percent < 0;
    }

    /** The bytes asked of a GPU of {@code capacity} bytes; -1 for a split. */
    long fixedOf(long capacity) {
        if (bytes >= 0) {
            return bytes;
        }
        return percent >= 0 ? Math.multiplyExact(capacity / 100, percent) + (capacity % 100) * percent / 100 : -1;
    }

    JsonObject toJson() {
        return bytes >= 0 ? new JsonObject().put("bytes", bytes) : new JsonObject().put("percent", percent);
    }

    static Guarantee fromJson(JsonObject json) {
        if (json == null) {
            return SPLIT;
        }
        return json.containsKey("bytes") ? ofBytes(json.getLong("bytes")) : ofPercent(json.getInteger("percent"));
    }

    @Override
    public String toString() {
        return bytes >= 0 ? bytes + " bytes" : percent >= 0 ? percent + " %" : "an equal split";
    }
}
