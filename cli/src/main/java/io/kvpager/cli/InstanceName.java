package io.kvpager.cli;

import java.util.regex.Pattern;
import picocli.CommandLine.ITypeConverter;
import picocli.CommandLine.TypeConversionException;

/**
 * A cache instance name as it appears in event-bus addresses ({@code kvpager.<instance>.coordinator}):
 * letters, digits, {@code -} and {@code _}, so that the name can never add or hide an address segment.
 */
final class InstanceName implements ITypeConverter<String> {

    private static final Pattern NAME = Pattern.compile("[A-Za-z0-9][A-Za-z0-9_-]{0,62}");

    @Override
    public String convert(String value) {
        if (!NAME.matcher(value).matches()) {
            throw new TypeConversionException("'" + value + "' is not an instance name; use letters, digits, '-' and '_' (at most 63)");
        }
        return value;
    }
}
