package io.kvpager.internal.options;

import io.vertx.config.ConfigRetriever;
import io.vertx.config.ConfigRetrieverOptions;
import io.vertx.config.ConfigStoreOptions;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;

import java.util.Locale;
import java.util.function.Function;

/**
 * Reads options (a cache's: {@code KvCacheOptions.load}) through vertx-config in three layers,
 * each overriding the one before: a JSON file, environment variables {@code KVPAGER_<FIELD>}, and
 * system properties {@code kvpager.<field>}; a caller's own overrides (a command line's flags) go
 * on top of all three. The keys, their types and their names in the environment come from the
 * options class's {@link OptionTable}.
 *
 * <p>The file is read by one retriever and the overrides by another, so the file's keys are
 * checked strictly (a typo is an error) while the rest of the environment and the JVM's own
 * system properties are never mistaken for options. Nested objects ({@code sim}, {@code gpus})
 * are merged key by key: {@code -Dkvpager.sim.latency=true} keeps the file's other sim options.
 */
public final class OptionSources {

    /** Prefix of every option's system property: {@code -Dkvpager.tp=4}. */
    public static final String PROPERTY_PREFIX = "kvpager.";
    /** Prefix of every option's environment variable: {@code KVPAGER_TP=4}. */
    public static final String ENV_PREFIX = "KVPAGER_";

    private OptionSources() {
    }

    /** {@code KVPAGER_} and the key in upper snake case: {@code sendTimeoutMs -> KVPAGER_SEND_TIMEOUT_MS}. */
    public static String envName(String key) {
        return ENV_PREFIX + key.replaceAll("([a-z0-9])([A-Z])", "$1_$2").toUpperCase(Locale.ROOT);
    }

    /** {@code kvpager.} and the key: {@code kvpager.sendTimeoutMs}. */
    public static String propertyName(String key) {
        return PROPERTY_PREFIX + key;
    }

    /**
     * The options of the file at {@code path} (none when {@code null}), the environment, the
     * system properties and {@code flags}, in that order, read by {@code table} into
     * {@code create(json)}, which also validates them.
     */
    public static <O> Future<O> load(Vertx vertx, String path, JsonObject flags, OptionTable<O> table, Function<JsonObject, O> create) {
        Future<JsonObject> file = path == null ? Future.succeededFuture(new JsonObject())
                : read(vertx, new ConfigStoreOptions().setType("file").setFormat("json")
                        .setConfig(new JsonObject().put("path", path)))
                        .recover(e -> Future.failedFuture(new IllegalArgumentException(
                                "cannot read kvpager options from " + path + ": " + e.getMessage(), e)));
        JsonArray envNames = new JsonArray();
        for (String key : table.keys()) {
            envNames.add(envName(key));
        }
        Future<JsonObject> overrides = read(vertx,
                new ConfigStoreOptions().setType("env").setConfig(new JsonObject().put("raw-data", true).put("keys", envNames)),
                new ConfigStoreOptions().setType("sys").setConfig(new JsonObject()
                        .put("raw-data", true).put("hierarchical", true).put("cache", false)));
        return Future.all(file, overrides).compose(all -> {
            try {
                JsonObject options = fold(table, file.result(), overrides.result());
                for (String key : flags.fieldNames()) {
                    put(options, table.option(key), flags.getValue(key));
                }
                return Future.succeededFuture(create.apply(options));
            } catch (IllegalArgumentException e) {
                return Future.failedFuture(e);
            }
        });
    }

    /** The file's options with the environment's and then the system properties' on top. */
    static JsonObject fold(OptionTable<?> table, JsonObject file, JsonObject overrides) {
        JsonObject options = file.copy();
        for (Option<?, ?> option : table.options()) {
            String env = envName(option.key());
            Object raw = overrides.getValue(env);
            if (raw != null) {
                put(options, option, option.type().parse(raw.toString(), option.key(), env));
            }
        }
        Object tree = overrides.getValue("kvpager");
        if (tree instanceof JsonObject properties) {
            for (String key : properties.fieldNames()) {
                Option<?, ?> option;
                try {
                    option = table.option(key);
                } catch (IllegalArgumentException e) {
                    throw new IllegalArgumentException("system property " + PROPERTY_PREFIX + key + ": " + e.getMessage());
                }
                Object value = properties.getValue(key);
                if (value instanceof JsonObject nested && option.type().isObject()) {
                    put(options, option, typedLeaves(nested));
                } else {
                    put(options, option, option.type().parse(String.valueOf(value), key, propertyName(key)));
                }
            }
        }
        return options;
    }

    private static void put(JsonObject options, Option<?, ?> option, Object value) {
        if (option.type().isObject() && options.getValue(option.key()) instanceof JsonObject existing && value instanceof JsonObject added) {
            options.put(option.key(), existing.copy().mergeIn(added, true));
        } else {
            options.put(option.key(), value);
        }
    }

    /** System properties are text; nested option objects want numbers and booleans where the text is one. */
    private static JsonObject typedLeaves(JsonObject tree) {
        JsonObject out = new JsonObject();
        for (String key : tree.fieldNames()) {
            Object value = tree.getValue(key);
            out.put(key, value instanceof JsonObject nested ? typedLeaves(nested) : typed(String.valueOf(value)));
        }
        return out;
    }

    private static Object typed(String text) {
        String t = text.trim();
        if (t.equalsIgnoreCase("true") || t.equalsIgnoreCase("false")) {
            return Boolean.parseBoolean(t);
        }
        try {
            long v = Long.parseLong(t);
            return v == (int) v ? (Object) (int) v : (Object) v;
        } catch (NumberFormatException notAnInteger) {
            // not an integer: try the other shapes
        }
        if ((t.startsWith("{") && t.endsWith("}")) || (t.startsWith("[") && t.endsWith("]"))) {
            try {
                return t.startsWith("{") ? new JsonObject(t) : new JsonArray(t);
            } catch (RuntimeException notJson) {
                return text;
            }
        }
        try {
            return Double.parseDouble(t);
        } catch (NumberFormatException notANumber) {
            return text;
        }
    }

    private static Future<JsonObject> read(Vertx vertx, ConfigStoreOptions... stores) {
        ConfigRetrieverOptions options = new ConfigRetrieverOptions().setIncludeDefaultStores(false).setScanPeriod(0);
        for (ConfigStoreOptions store : stores) {
            options.addStore(store);
        }
        ConfigRetriever retriever = ConfigRetriever.create(vertx, options);
        return retriever.getConfig().eventually(retriever::close);
    }
}
