package io.kvpager.cli;

import io.kvpager.cache.KvCacheOptions;
import io.kvpager.internal.options.OptionSources;
import io.vertx.core.Vertx;
import io.vertx.core.json.JsonObject;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * A command's cache options through the one configuration path, {@link KvCacheOptions#load}: the
 * {@code --config} file, then {@code KVPAGER_*} variables, then {@code -Dkvpager.*} properties,
 * then the flags the user typed. An error names what the user can change: the flag when it was
 * typed (the flag wins over every layer, so the bad value is the flag's), otherwise every place
 * the option can come from.
 */
final class CacheOptionFlags {

    private static final long LOAD_TIMEOUT_S = 30;

    private final Map<String, String> flagOfField = new LinkedHashMap<>();
    private final JsonObject typed = new JsonObject();

    /** Records a flag the user typed, for option field {@code field}; {@code value} {@code null} when not typed. */
    CacheOptionFlags flag(String flag, String field, Object value) {
        flagOfField.put(field, flag);
        if (value != null) {
            typed.put(field, value);
        }
        return this;
    }

    /** Sets a field the command decides itself (not a flag of the user's). */
    CacheOptionFlags fixed(String field, Object value) {
        typed.put(field, value);
        return this;
    }

    /**
     * The options of every layer, validated.
     *
     * @throws IllegalArgumentException naming the flag, variable, property or file of a bad or missing value
     */
    KvCacheOptions load(Path config) {
        Vertx vertx = Vertx.vertx();
        try {
            return KvCacheOptions.load(vertx, config == null ? null : config.toString(), typed).await(LOAD_TIMEOUT_S, TimeUnit.SECONDS);
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException(explain(OneLine.of(e), config), e);
        } catch (Exception e) {
            throw new IllegalArgumentException(explain(OneLine.of(e), config), e);
        } finally {
            vertx.close();
        }
    }

    /** The message with the option's name turned into what the user typed or can type. */
    String explain(String message, Path config) {
        if (config != null && message.startsWith("cannot read kvpager options from")) {
            return "--config " + config + ": " + message;
        }
        for (Map.Entry<String, String> entry : flagOfField.entrySet()) {
            String field = entry.getKey();
            if (message.startsWith(field + " ") || message.startsWith(field + ":")) {
                String rest = message.substring(field.length());
                if (typed.containsKey(field)) {
                    return entry.getValue() + rest;
                }
                return entry.getValue() + rest + " (or " + field + " in the --config file, $" + OptionSources.envName(field) + ", -D"
                        + OptionSources.propertyName(field) + ")";
            }
        }
        return message;
    }
}
