package io.kvpager.cli.demo;

import java.util.Arrays;
import java.util.Locale;
import java.util.stream.Collectors;

/** A choice the demo's command line names by its constant's name ({@code --policy first-come}, {@code --trace-preset rotating}). */
interface FlagChoice {

    /** The constant's name ({@link Enum#name()}), from which the flag is made. */
    String name();

    /** The name on the command line and in the tables: the constant's, lower case, {@code -} for {@code _}. */
    default String flag() {
        return name().toLowerCase(Locale.ROOT).replace('_', '-');
    }

    /** What the choice means, for the run's header line. */
    String meaning();

    /**
     * The constant of {@code type} called {@code name} on the command line (case and surrounding
     * white space ignored), or an error naming every choice: "no {@code what} 'x'; {@code plural}: a, b".
     */
    static <T extends Enum<T> & FlagChoice> T of(Class<T> type, String name, String what, String plural) {
        String key = name.strip().toLowerCase(Locale.ROOT);
        T[] all = type.getEnumConstants();
        return Arrays.stream(all).filter(choice -> choice.flag().equals(key)).findFirst()
                .orElseThrow(() -> new IllegalArgumentException("no " + what + " '" + name + "'; " + plural + ": "
                        + Arrays.stream(all).map(FlagChoice::flag).collect(Collectors.joining(", "))));
    }
}
