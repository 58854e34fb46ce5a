package io.kvpager.cli;

import java.time.Duration;
import java.time.format.DateTimeParseException;
import java.util.Locale;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import picocli.CommandLine.ITypeConverter;
import picocli.CommandLine.TypeConversionException;

/** Reads durations as typed on a command line: {@code 20s}, {@code 500ms}, {@code 2m}, {@code 20} (seconds), or ISO-8601. */
public final class DurationConverter implements ITypeConverter<Duration> {

    private static final Pattern SPAN = Pattern.compile("(\\d+)\\s*(ms|s|m|h)?");

    @Override
    public Duration convert(String value) {
        String text = value.strip().toLowerCase(Locale.ROOT);
        Matcher m = SPAN.matcher(text);
        Duration duration;
        if (m.matches()) {
            long amount;
            try {
                amount = Long.parseLong(m.group(1));
            } catch (NumberFormatException e) {
                throw new TypeConversionException("'" + value + "' is too long a duration");
            }
            String unit = m.group(2) == null ? "s" : m.group(2);
            duration = switch (unit) {
                case "ms" -> Duration.ofMillis(amount);
                case "m" -> Duration.ofMinutes(amount);
                case "h" -> Duration.ofHours(amount);
                default -> Duration.ofSeconds(amount);
            };
        } else {
            try {
                duration = Duration.parse(value.strip().toUpperCase(Locale.ROOT));
            } catch (DateTimeParseException e) {
                throw new TypeConversionException("'" + value + "' is not a duration; use e.g. 20s, 500ms or 2m");
            }
        }
        if (duration.isNegative() || duration.isZero()) {
            throw new TypeConversionException("'" + value + "' must be a positive duration");
        }
        return duration;
    }
}
