package io.kvpager.internal.options;

import io.vertx.core.json.JsonObject;

import java.util.function.BiConsumer;
import java.util.function.Function;
import java.util.function.Supplier;

/**
 * One row of an {@link OptionTable}: an option's JSON key, its type, how it is read from and
 * written to its options object, and what JSON {@code null} does to it.
 *
 * @param key the JSON key
 * @param type the value's shape
 * @param get the value to write; {@code null} leaves the key out of the JSON
 * @param set the options object's setter, which checks the value and refuses it naming the key
 * @param whenNull the value JSON {@code null} sets ({@code () -> null} unsets the option), or
 *     {@code null} when {@code null} is refused
 * @param <O> the options class
 * @param <T> the value's Java type
 */
public record Option<O, T>(String key, OptionType<T> type, Function<O, T> get, BiConsumer<O, T> set, Supplier<T> whenNull) {

    /** Sets the option on {@code target} from its JSON value; {@code null} as {@link #whenNull} says. */
    void read(O target, Object json, Function<Option<O, ?>, IllegalArgumentException> nullRefusal) {
        if (json == null) {
            if (whenNull == null) {
                throw nullRefusal.apply(this);
            }
            set.accept(target, whenNull.get());
        } else {
            set.accept(target, type.read(key, json));
        }
    }

    /** Puts the option's value into {@code json}, unless it is unset. */
    void write(O source, JsonObject json) {
        T value = get.apply(source);
        if (value != null) {
            json.put(key, type.write(value));
        }
    }
}
