package io.kvpager.internal.options;

import io.vertx.core.json.JsonObject;

import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.BiConsumer;
import java.util.function.Function;

/**
 * The options of one options class, one row each, in the order its JSON lists them: the one place
 * that says which keys a class reads, of what type, through which setter, and how it writes them
 * back. Reading JSON, writing it, refusing unknown keys and (for the cache's options) the names
 * in the environment all come from here, so an option is added by one row and its setter.
 *
 * @param <O> the options class
 */
public final class OptionTable<O> {

    /** JSON {@code null} refused as {@code tp must not be null}. */
    public static final Function<Option<?, ?>, IllegalArgumentException> MUST_NOT_BE_NULL =
            option -> new IllegalArgumentException(option.key() + " must not be null");
    /** JSON {@code null} refused as {@code tp is required}. */
    public static final Function<Option<?, ?>, IllegalArgumentException> REQUIRED = option -> OptionRules.required(option.key());
    /** JSON {@code null} refused as any value of another type: {@code host must be a string, got nothing}. */
    public static final Function<Option<?, ?>, IllegalArgumentException> MISTYPED =
            option -> OptionRules.typeError(option.key(), option.type().description(), null);

    private final String subject;
    private final Function<Option<?, ?>, IllegalArgumentException> nullRefusal;
    private final Map<String, Option<O, ?>> options = new LinkedHashMap<>();

    private OptionTable(String subject, Function<Option<?, ?>, IllegalArgumentException> nullRefusal) {
        this.subject = subject;
        this.nullRefusal = nullRefusal;
    }

    /**
     * An empty table.
     *
     * @param subject what the keys are, for refusals ({@code "option"}: {@code unknown option 'tpp'; known options: ...})
     * @param nullRefusal the refusal of JSON {@code null} for an option that takes none
     */
    public static <O> OptionTable<O> of(String subject, Function<Option<?, ?>, IllegalArgumentException> nullRefusal) {
        return new OptionTable<>(subject, nullRefusal);
    }

    /** An option that JSON {@code null} does not set. */
    public <T> OptionTable<O> add(String key, OptionType<T> type, Function<O, T> get, BiConsumer<O, T> set) {
        return add(new Option<>(key, type, get, set, null));
    }

    /** An option that JSON {@code null} unsets: its setter takes {@code null}. */
    public <T> OptionTable<O> unsettable(String key, OptionType<T> type, Function<O, T> get, BiConsumer<O, T> set) {
        return add(new Option<>(key, type, get, set, () -> null));
    }

    public OptionTable<O> add(Option<O, ?> option) {
        if (options.putIfAbsent(option.key(), option) != null) {
            throw new IllegalStateException("option " + option.key() + " is in the table twice");
        }
        return this;
    }

    /**
     * Sets every option {@code json} holds on {@code target}, through its setter.
     *
     * @throws IllegalArgumentException for an unknown key (listing the known ones), a value of
     *     another type, or one its setter refuses, naming the key
     */
    public O read(O target, JsonObject json) {
        for (String key : json.fieldNames()) {
            option(key).read(target, json.getValue(key), nullRefusal::apply);
        }
        return target;
    }

    /** Every option of {@code source} that is set, in the table's order. */
    public JsonObject toJson(O source) {
        JsonObject json = new JsonObject();
        for (Option<O, ?> option : options.values()) {
            option.write(source, json);
        }
        return json;
    }

    /** The row of {@code key}, or the refusal of an unknown key listing the known ones. */
    public Option<O, ?> option(String key) {
        Option<O, ?> option = options.get(key);
        if (option == null) {
            throw OptionReader.unknownKey(key, keys(), subject);
        }
        return option;
    }

    /** Every key, in the table's order. */
    public List<String> keys() {
        return Collections.unmodifiableList(new ArrayList<>(options.keySet()));
    }

    /** Every row, in the table's order. */
    public List<Option<O, ?>> options() {
        return List.copyOf(options.values());
    }
}
