package io.kvpager.cli.text;

import java.util.Locale;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Memory sizes as people type them: {@code 40GiB}, {@code 512MiB}, {@code 1.5GiB}, or plain bytes
 * ({@code 1073741824}). Units are binary; {@code GB} and {@code G} are read as {@code GiB} because
 * GPU memory is sold and reported in binary units.
 */
public final class ByteSize {

    private static final Pattern SIZE = Pattern.compile("(\\d+(?:\\.\\d+)?)\\s*([KMGT]?)(?:i?B)?", Pattern.CASE_INSENSITIVE);
    private static final String[] UNITS = {"B", "KiB", "MiB", "GiB", "TiB"};

    private ByteSize() {
    }

    /**
     * Reads a size.
     *
     * @throws IllegalArgumentException for anything that is not a non-negative size that fits a long
     */
    public static long parse(String text) {
        if (text == null || text.isBlank()) {
            throw new IllegalArgumentException("a size is required, e.g. 40GiB, 512MiB or 1073741824");
        }
        Matcher m = SIZE.matcher(text.strip());
        if (!m.matches()) {
            throw new IllegalArgumentException("'" + text + "' is not a size; use e.g. 40GiB, 512MiB or 1073741824");
        }
        int shift = switch (m.group(2).toUpperCase(Locale.ROOT)) {
            case "K" -> 10;
            case "M" -> 20;
            case "G" -> 30;
            case "T" -> 40;
            default -> 0;
        };
        String number = m.group(1);
        if (number.contains(".")) {
            if (shift == 0) {
                throw new IllegalArgumentException("'" + text + "': a byte count must be whole");
            }
            double bytes = Double.parseDouble(number) * (1L << shift);
            if (bytes >= Long.MAX_VALUE) {
                throw new IllegalArgumentException("'" + text + "' is too large");
            }
            return (long) bytes;
        }
        try {
            return Math.multiplyExact(Long.parseLong(number), 1L << shift);
        } catch (ArithmeticException | NumberFormatException e) {
            throw new IllegalArgumentException("'" + text + "' is too large");
        }
    }

    /** A size for people: {@code 40.0 GiB}, {@code 512.0 MiB}, {@code 96 B}. */
    public static String format(long bytes) {
        if (bytes < 0) {
            return "-" + format(-bytes);
        }
        int unit = 0;
        double value = bytes;
        while (value >= 1024 && unit < UNITS.length - 1) {
            value /= 1024;
            unit++;
        }
        return unit == 0 ? bytes + " B" : String.format(Locale.ROOT, "%.1f %s", value, UNITS[unit]);
    }
}
