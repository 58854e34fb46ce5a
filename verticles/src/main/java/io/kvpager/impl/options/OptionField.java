package io.kvpager.impl.options;

import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * One field of {@link io.kvpager.cache.KvCacheOptions}: its JSON key, its type, and the names it has in
 * the environment ({@code KVPAGER_SEND_TIMEOUT_MS}) and in system properties
 * ({@code kvpager.sendTimeoutMs}). Reading a value checks its type and names the field when it is
 * wrong, so a typo in a config file never turns into a silent default.
 */
public enum OptionField {
    INSTANCE("instance", Kind.STRING),
    TP("tp", Kind.INT),
    PP("pp", Kind.INT),
    STAGES("stages", Kind.INT_LIST),
    GROUP("group", Kind.INT),
    LAYERS("layers", Kind.INT),
    KV_BUFFERS("kvBuffers", Kind.INT),
    BLOCK_BYTES("blockBytes", Kind.LONG),
    PAGE_BYTES("pageBytes", Kind.LONG),
    PAGES("pages", Kind.INT),
    LAYOUT("layout", Kind.STRING),
    ZERO_PAGE("zeroPage", Kind.BOOL),
    SEND_TIMEOUT_MS("sendTimeoutMs", Kind.LONG),
    TENSORS_DEADLINE_MS("tensorsDeadlineMs", Kind.LONG),
    TENSORS_POLL_MS("tensorsPollMs", Kind.LONG),
    RESERVE_LOW("reserveLow", Kind.INT),
    RESERVE_HIGH("reserveHigh", Kind.INT),
    ADAPTIVE_RESERVE("adaptiveReserve", Kind.BOOL),
    REFILL_INTERVAL_MS("refillIntervalMs", Kind.LONG),
    MEMORY_LIMIT_BYTES("memoryLimitBytes", Kind.LONG),
    LAZY_START("lazyStart", Kind.BOOL),
    LOCAL_WORKERS("localWorkers", Kind.BOOL),
    DEVICE("device", Kind.STRING),
    GPUS("gpus", Kind.OBJECT),
    SIM("sim", Kind.OBJECT);

    /** The JSON types an option can have. */
    public enum Kind { STRING, INT, LONG, BOOL, INT_LIST, OBJECT }

    /** Prefix of every option's system property: {@code -Dkvpager.tp=4}. */
    public static final String PROPERTY_PREFIX = "kvpager.";
    /** Prefix of every option's environment variable: {@code KVPAGER_TP=4}. */
    public static final String ENV_PREFIX = "KVPAGER_";

    private final String key;
    private final Kind kind;

    OptionField(String key, Kind kind) {
        this.key = key;
        this.kind = kind;
    }

    public String key() {
        return key;
    }

    public Kind kind() {
        return kind;
    }

    /** {@code KVPAGER_} and the key in upper snake case: {@code sendTimeoutMs -> KVPAGER_SEND_TIMEOUT_MS}. */
    public String envName() {
        return ENV_PREFIX + key.replaceAll("([a-z0-9])([A-Z])", "$1_$2").toUpperCase(Locale.ROOT);
    }

    /** {@code kvpager.} and the key: {@code kvpager.sendTimeoutMs}. */
    public String propertyName() {
        return PROPERTY_PREFIX + key;
    }

    /** The field with this JSON key, or an error listing the known ones. */
    public static OptionField of(String key) {
        for (OptionField f : values()) {
            if (f.key.equals(key)) {
                return f;
            }
        }
        throw new IllegalArgumentException("unknown option '" + key + "'; known options: " + knownKeys());
    }

    /** The field whose environment variable is {@code name}, or {@code null}. */
    public static OptionField ofEnvName(String name) {
        for (OptionField f : values()) {
            if (f.envName().equals(name)) {
                return f;
            }
        }
        return null;
    }

    public static String knownKeys() {
        List<String> keys = new ArrayList<>();
        for (OptionField f : values()) {
            keys.add(f.key);
        }
        return String.join(", ", keys);
    }

    public String string(Object value) {
        if (value instanceof String s) {
            return s;
        }
        throw typeError("a string", value);
    }

    public int integer(Object value) {
        long v = longValue(value, "an integer");
        if (v < Integer.MIN_VALUE || v > Integer.MAX_VALUE) {
            throw typeError("an integer in the int range", value);
        }
        return (int) v;
    }

    public long longValue(Object value) {
        return longValue(value, "an integer");
    }

    public boolean bool(Object value) {
        if (value instanceof Boolean b) {
            return b;
        }
        throw typeError("true or false", value);
    }

    public List<Integer> intList(Object value) {
        if (!(value instanceof JsonArray array)) {
            throw typeError("a list of integers", value);
        }
        List<Integer> out = new ArrayList<>(array.size());
        for (Object item : array) {
            if (!(item instanceof Number n) || !isIntegral(n) || n.longValue() != n.intValue()) {
                throw typeError("a list of integers", value);
            }
            out.add(n.intValue());
        }
        return out;
    }

    public JsonObject object(Object value) {
        if (value instanceof JsonObject o) {
            return o.copy();
        }
        if (value instanceof Map<?, ?> m) {
            @SuppressWarnings("unchecked")
            Map<String, Object> map = (Map<String, Object>) m;
            return new JsonObject(map).copy();
        }
        throw typeError("a JSON object", value);
    }

    /**
     * Turns the text of an environment variable or system property into this field's JSON type:
     * {@code "4"} for an int, {@code "true"} for a bool, {@code "0,1"} or {@code "[0,1]"} for a
     * list, JSON text for an object.
     *
     * @param source where the text came from, for the error message ({@code KVPAGER_TP})
     */
    public Object parse(String raw, String source) {
        String text = raw.trim();
        try {
            return switch (kind) {
                case STRING -> raw;
                case INT -> Integer.parseInt(text);
                case LONG -> Long.parseLong(text);
                case BOOL -> switch (text.toLowerCase(Locale.ROOT)) {
                    case "true" -> Boolean.TRUE;
                    case "false" -> Boolean.FALSE;
                    default -> throw new IllegalArgumentException();
                };
                case INT_LIST -> {
                    String inner = text.startsWith("[") && text.endsWith("]") ? text.substring(1, text.length() - 1) : text;
                    JsonArray list = new JsonArray();
                    for (String part : inner.split(",")) {
                        if (!part.isBlank()) {
                            list.add(Integer.parseInt(part.trim()));
                        }
                    }
                    yield list;
                }
                case OBJECT -> new JsonObject(text);
            };
        } catch (RuntimeException e) {
            throw new IllegalArgumentException(source + " (option " + key + "): '" + raw + "' is not " + describe(kind));
        }
    }

    private long longValue(Object value, String expected) {
        if (value instanceof Number n && isIntegral(n)) {
            return n.longValue();
        }
        throw typeError(expected, value);
    }

    private static boolean isIntegral(Number n) {
        return n instanceof Integer || n instanceof Long || n instanceof Short || n instanceof Byte
                || (n instanceof java.math.BigInteger b && b.bitLength() < 64);
    }

    private IllegalArgumentException typeError(String expected, Object value) {
        String shown = value instanceof String s ? "'" + s + "'" : String.valueOf(value);
        return new IllegalArgumentException(key + " must be " + expected + ", got " + shown);
    }

    private static String describe(Kind kind) {
        return switch (kind) {
            case STRING -> "a string";
            case INT -> "an integer";
            case LONG -> "an integer";
            case BOOL -> "true or false";
            case INT_LIST -> "a list of integers such as 0,1";
            case OBJECT -> "a JSON object";
        };
    }
}
