package io.kvpager.internal.options;

import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;

import java.math.BigInteger;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.function.BiFunction;

/**
 * Strict reads of JSON option values, the one reader behind every options data object
 * ({@code KvCacheOptions}, {@code RankWorkerOptions}, {@code ClusterNodeOptions}) and the workers'
 * request bodies. {@link JsonObject}'s own getters truncate a long into an int, read {@code 1.5} as
 * {@code 1} and {@code "4"} as a string where a number was meant; these refuse them, naming the field
 * (see {@link OptionRules#typeError}), so that a typo in a config file never becomes a silent default.
 */
public final class OptionReader {

    private OptionReader() {
    }

    /**
     * Refuses a key other than {@code known}, listing the known ones in their order.
     *
     * @param subject what the keys are options of, for the message ({@code "option"})
     */
    public static void knownKeys(JsonObject json, Collection<String> known, String subject) {
        for (String key : json.fieldNames()) {
            if (!known.contains(key)) {
                throw unknownKey(key, known, subject);
            }
        }
    }

    /** The refusal of an unknown key: {@code unknown option 'tpp'; known options: instance, tp, ...}. */
    public static IllegalArgumentException unknownKey(String key, Collection<String> known, String subject) {
        return new IllegalArgumentException("unknown " + subject + " '" + key + "'; known " + subject + "s: " + String.join(", ", known));
    }

    public static String string(String field, Object value) {
        if (value instanceof String s) {
            return s;
        }
        throw OptionRules.typeError(field, "a string", value);
    }

    /** An integer within the int range; {@code 1.0}, {@code "1"} and {@code 2^40} are refused. */
    public static int integer(String field, Object value) {
        long v = longValue(field, value);
        if (v != (int) v) {
            throw OptionRules.typeError(field, "an integer in the int range", value);
        }
        return (int) v;
    }

    /** An integer within the long range. */
    public static long longValue(String field, Object value) {
        if (value instanceof Integer || value instanceof Long || value instanceof Short || value instanceof Byte
                || (value instanceof BigInteger b && b.bitLength() < 64)) {
            return ((Number) value).longValue();
        }
        throw OptionRules.typeError(field, "an integer", value);
    }

    public static boolean bool(String field, Object value) {
        if (value instanceof Boolean b) {
            return b;
        }
        throw OptionRules.typeError(field, "true or false", value);
    }

    public static List<Integer> intList(String field, Object value) {
        return list(field, value, "a list of integers", OptionReader::integer);
    }

    public static List<String> strings(String field, Object value) {
        return list(field, value, "a list of strings", OptionReader::string);
    }

    /** A JSON array, each element read by {@code element} and named {@code field[i]} when refused. */
    private static <T> List<T> list(String field, Object value, String expected, BiFunction<String, Object, T> element) {
        if (!(value instanceof JsonArray array)) {
            throw OptionRules.typeError(field, expected, value);
        }
        List<T> out = new ArrayList<>(array.size());
        for (int i = 0; i < array.size(); i++) {
            out.add(element.apply(field + "[" + i + "]", array.getValue(i)));
        }
        return out;
    }

    /** A JSON object (a copy), or a map read as one. */
    public static JsonObject object(String field, Object value) {
        if (value instanceof JsonObject o) {
            return o.copy();
        }
        if (value instanceof Map<?, ?> m) {
            @SuppressWarnings("unchecked")
            Map<String, Object> map = (Map<String, Object>) m;
            return new JsonObject(map).copy();
        }
        throw OptionRules.typeError(field, "a JSON object", value);
    }
}
