package io.kvpager.cache;

import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;

import java.util.ArrayList;
import java.util.List;
import java.util.function.Function;

/**
 * The strict reads behind the stats records' {@code fromJson}: a field that is missing or of the
 * wrong type is an {@link IllegalArgumentException} naming it, so a peer of another version is
 * reported as such rather than shown as zeros.
 */
final class StatsJson {

    private StatsJson() {
    }

    static long number(JsonObject json, String key) {
        if (!(json.getValue(key) instanceof Number n)) {
            throw new IllegalArgumentException(key + " must be a number, got " + json.getValue(key));
        }
        return n.longValue();
    }

    static int integer(JsonObject json, String key) {
        long n = number(json, key);
        if (n != (int) n) {
            throw new IllegalArgumentException(key + " must fit an int, got " + n);
        }
        return (int) n;
    }

    static boolean bool(JsonObject json, String key) {
        if (!(json.getValue(key) instanceof Boolean b)) {
            throw new IllegalArgumentException(key + " must be true or false, got " + json.getValue(key));
        }
        return b;
    }

    static String string(JsonObject json, String key) {
        if (!(json.getValue(key) instanceof String s)) {
            throw new IllegalArgumentException(key + " must be text, got " + json.getValue(key));
        }
        return s;
    }

    /** Text, or {@code null} when the field is absent. */
    static String optionalString(JsonObject json, String key) {
        return json.getValue(key) == null ? null : string(json, key);
    }

    static JsonObject object(JsonObject json, String key) {
        if (!(json.getValue(key) instanceof JsonObject o)) {
            throw new IllegalArgumentException(key + " must be an object, got " + json.getValue(key));
        }
        return o;
    }

    /** Each element of the list {@code key}, read by {@code read}; an element of another type names the list. */
    static <T> List<T> list(JsonObject json, String key, Class<?> element, Function<Object, T> read) {
        if (!(json.getValue(key) instanceof JsonArray array)) {
            throw new IllegalArgumentException(key + " must be a list, got " + json.getValue(key));
        }
        List<T> values = new ArrayList<>(array.size());
        for (Object value : array) {
            if (!element.isInstance(value)) {
                throw new IllegalArgumentException(key + " must hold " + element.getSimpleName() + " values, got " + value);
            }
            values.add(read.apply(value));
        }
        return values;
    }
}
