package io.kvpager.internal.options;

import io.kvpager.sim.SimOptions;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.function.BiFunction;
import java.util.function.Function;

/**
 * The shape of an option's value: how it is read strictly from JSON (naming the field when the
 * value is not one, see {@link OptionReader}), written back to JSON, and parsed from the text of an
 * environment variable or a system property.
 *
 * @param <T> the value's Java type
 */
public final class OptionType<T> {

    public static final OptionType<String> STRING = new OptionType<>("a string", OptionReader::string, s -> s, raw -> raw, false);
    public static final OptionType<Integer> INT = new OptionType<>("an integer", OptionReader::integer, i -> i,
            raw -> Integer.parseInt(raw.trim()), false);
    public static final OptionType<Long> LONG = new OptionType<>("an integer", OptionReader::longValue, l -> l,
            raw -> Long.parseLong(raw.trim()), false);
    public static final OptionType<Boolean> BOOL = new OptionType<>("true or false", OptionReader::bool, b -> b,
            OptionType::parseBool, false);
    public static final OptionType<List<Integer>> INT_LIST = new OptionType<>("a list of integers such as 0,1",
            OptionReader::intList, list -> new JsonArray(new ArrayList<>(list)), OptionType::parseIntList, false);
    public static final OptionType<List<String>> STRING_LIST = new OptionType<>("a list of strings", OptionReader::strings,
            list -> new JsonArray(new ArrayList<>(list)), raw -> new JsonArray(List.of(raw.split(","))), false);
    /** A JSON object; its keys are merged one by one when option sources are layered. */
    public static final OptionType<JsonObject> OBJECT = new OptionType<>("a JSON object", OptionReader::object, JsonObject::copy,
            JsonObject::new, true);

    /** The sim device's options, read by {@link SimOptions#parse} (which lists the accepted keys when refusing one). */
    public static final OptionType<SimOptions> SIM = OBJECT.as((field, json) -> SimOptions.parse(json.getMap()), OptionType::simJson);

    private final String description;
    private final BiFunction<String, Object, T> read;
    private final Function<T, Object> write;
    private final Function<String, Object> parse;
    private final boolean object;

    private OptionType(String description, BiFunction<String, Object, T> read, Function<T, Object> write,
                       Function<String, Object> parse, boolean object) {
        this.description = description;
        this.read = read;
        this.write = write;
        this.parse = parse;
        this.object = object;
    }

    /**
     * A type held in this one's JSON shape: {@code Layout} as a string, typed sub-options as an
     * object. {@code from} refuses a value it cannot take with an {@link IllegalArgumentException}
     * naming the field it is given.
     */
    public <U> OptionType<U> as(BiFunction<String, T, U> from, Function<U, T> to) {
        return new OptionType<>(description, (field, json) -> from.apply(field, read.apply(field, json)),
                value -> write.apply(to.apply(value)), parse, object);
    }

    /** What the value must be, for refusals: {@code "an integer"}. */
    public String description() {
        return description;
    }

    /** The value of {@code field} in JSON, strictly: a value of another shape is refused, naming the field. */
    public T read(String field, Object json) {
        return read.apply(field, json);
    }

    /** The value as JSON. */
    public Object write(T value) {
        return write.apply(value);
    }

    /** Whether the value is a JSON object, whose keys layered sources merge one by one. */
    public boolean isObject() {
        return object;
    }

    /**
     * The text of an environment variable or system property as this type's JSON value:
     * {@code "4"} for an integer, {@code "true"} for a bool, {@code "0,1"} or {@code "[0,1]"} for a
     * list, JSON text for an object.
     *
     * @param field the option, for the message
     * @param source where the text came from, for the message ({@code KVPAGER_TP})
     */
    public Object parse(String raw, String field, String source) {
        try {
            return parse.apply(raw);
        } catch (RuntimeException e) {
            throw new IllegalArgumentException(source + " (option " + field + "): '" + raw + "' is not " + description);
        }
    }

    private static JsonObject simJson(SimOptions sim) {
        JsonObject json = new JsonObject();
        sim.toMap().forEach((key, value) -> json.put(key, value instanceof List<?> list ? new JsonArray(new ArrayList<>(list)) : value));
        return json;
    }

    private static Boolean parseBool(String raw) {
        return switch (raw.trim().toLowerCase(Locale.ROOT)) {
            case "true" -> Boolean.TRUE;
            case "false" -> Boolean.FALSE;
            default -> throw new IllegalArgumentException(raw);
        };
    }

    private static JsonArray parseIntList(String raw) {
        String text = raw.trim();
        String inner = text.startsWith("[") && text.endsWith("]") ? text.substring(1, text.length() - 1) : text;
        JsonArray list = new JsonArray();
        for (String part : inner.split(",")) {
            if (!part.isBlank()) {
                list.add(Integer.parseInt(part.trim()));
            }
        }
        return list;
    }
}
