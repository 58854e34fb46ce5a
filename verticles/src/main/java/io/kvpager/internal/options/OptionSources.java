package io.kvpager.internal.options;

import io.vertx.config.ConfigRetriever;
import io.vertx.config.ConfigRetrieverOptions;
import io.vertx.config.ConfigStoreOptions;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;

/**
 * Reads {@code KvCacheOptions} through vertx-config in three layers, each overriding the one
 * before: a JSON file, environment variables {@code KVPAGER_<FIELD>}, and system properties
 * {@code kvpager.<field>}; a caller's own overrides (a command line's flags) go on top of all three.
 *
 * <p>The file is read by one retriever and the overrides by another, so the file's keys are
 * checked strictly (a typo is an error) while the rest of the environment and the JVM's own
 * system properties are never mistaken for options. Nested objects ({@code sim}, {@code gpus})
 * are merged key by key: {@code -Dkvpager.sim.latency=true} keeps the file's other sim options.
 */
public final class OptionSources {

    private OptionSources() {
    }

    /**
     * The file's options, the environment's and the system properties' over them, then the flags:
     * one JSON object for the options class to read and validate (see
     * {@code KvCacheOptions.load(Vertx, String, JsonObject)}).
     */
    public static Future<JsonObject> load(Vertx vertx, String path, JsonObject flags) {
        Future<JsonObject> file = path == null ? Future.succeededFuture(new JsonObject())
                : read(vertx, new ConfigStoreOptions().setType("file").setFormat("json")
                        .setConfig(new JsonObject().put("path", path)))
                        .recover(e -> Future.failedFuture(new IllegalArgumentException(
                                "cannot read kvpager options from " + path + ": " + e.getMessage(), e)));
        JsonArray envNames = new JsonArray();
        for (OptionField field : OptionField.values()) {
            envNames.add(field.envName());
        }
        Future<JsonObject> overrides = read(vertx,
                new ConfigStoreOptions().setType("env").setConfig(new JsonObject().put("raw-data", true).put("keys", envNames)),
                new ConfigStoreOptions().setType("sys").setConfig(new JsonObject()
                        .put("raw-data", true).put("hierarchical", true).put("cache", false)));
        return Future.all(file, overrides).compose(all -> {
            try {
                JsonObject options = fold(file.result(), overrides.result());
                for (String key : flags.fieldNames()) {
                    put(options, OptionField.of(key), flags.getValue(key));
                }
                return Future.succeededFuture(options);
            } catch (IllegalArgumentException e) {
                return Future.failedFuture(e);
            }
        });
    }

    /** The file's options with the environment's and then the system properties' on top. */
    static JsonObject fold(JsonObject file, JsonObject overrides) {
        JsonObject options = file.copy();
        for (OptionField field : OptionField.values()) {
            Object raw = overrides.getValue(field.envName());
            if (raw != null) {
                put(options, field, field.parse(raw.toString(), field.envName()));
            }
        }
        Object tree = overrides.getValue("kvpager");
        if (tree instanceof JsonObject properties) {
            for (String key : properties.fieldNames()) {
                OptionField field;
                try {
                    field = OptionField.of(key);
                } catch (IllegalArgumentException e) {
                    throw new IllegalArgumentException("system property " + OptionField.PROPERTY_PREFIX + key + ": " + e.getMessage());
                }
                Object value = properties.getValue(key);
                if (value instanceof JsonObject nested && field.kind() == OptionField.Kind.OBJECT) {
                    put(options, field, typedLeaves(nested));
                } else {
                    put(options, field, field.parse(String.valueOf(value), field.propertyName()));
                }
            }
        }
        return options;
    }

    private static void put(JsonObject options, OptionField field, Object value) {
        if (field.kind() == OptionField.Kind.OBJECT && options.getValue(field.key()) instanceof JsonObject existing) {
            options.put(field.key(), existing.copy().mergeIn((JsonObject) value, true));
        } else {
            options.put(field.key(), value);
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
