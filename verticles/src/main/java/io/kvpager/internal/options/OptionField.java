package io.kvpager.internal.options;

import io.kvpager.internal.options.OptionReader;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

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
    KV_DTYPE("kvDtype", Kind.STRING),
    ZERO_PAGE("zeroPage", Kind.BOOL),
    SEND_TIMEOUT_MS("sendTimeoutMs", Kind.LONG),
    TENSORS_DEADLINE_MS("tensorsDeadlineMs", Kind.LONG),
    TENSORS_POLL_MS("tensorsPollMs", Kind.LONG),
    RESERVE_LOW("reserveLow", Kind.INT),
    RESERVE_HIGH("reserveHigh", Kind.INT),
    ADAPTIVE_RESERVE("adaptiveReserve", Kind.BOOL),
    REFILL_INTERVAL_MS("refillIntervalMs", Kind.LONG),
    IDLE_HANDLE_PAGES("idleHandlePages", Kind.INT),
    IDLE_HANDLE_MS("idleHandleMs", Kind.LONG),
    MEMORY_LIMIT_BYTES("memoryLimitBytes", Kind.LONG),
    LAZY_START("lazyStart", Kind.BOOL),
    LOCAL_WORKERS("localWorkers", Kind.BOOL),
    DEVICE("device", Kind.STRING),
    GPUS("gpus", Kind.OBJECT),
    SIM("sim", Kind.OBJECT),
    GPU_MEMORY_PERCENT("gpuMemoryPercent", Kind.INT),
    HANDLE_POOL("handlePool", Kind.OBJECT),
    GUARANTEE_BYTES("guaranteeBytes", Kind.LONG),
    GUARANTEE_PERCENT("guaranteePercent", Kind.INT),
    RECLAIM_DEADLINE_MS("reclaimDeadlineMs", Kind.LONG);

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
        throw OptionReader.unknownKey(key, keys(), "option");
    }

    /** Every field's key, in declaration order. */
    public static List<String> keys() {
        List<String> keys = new ArrayList<>();
        for (OptionField f : values()) {
            keys.add(f.key);
        }
        return keys;
    }

    /** This field's value as a string, read by {@link OptionReader}. */
    public String string(Object value) {
        return OptionReader.string(key, value);
    }

    public int integer(Object value) {
        return OptionReader.integer(key, value);
    }

    public long longValue(Object value) {
        return OptionReader.longValue(key, value);
    }

    public boolean bool(Object value) {
        return OptionReader.bool(key, value);
    }

    public List<Integer> intList(Object value) {
        return OptionReader.intList(key, value);
    }

    public JsonObject object(Object value) {
        return OptionReader.object(key, value);
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
