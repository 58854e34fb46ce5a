package io.kvpager.cli;

import io.kvpager.internal.options.OptionRules;
import picocli.CommandLine.ITypeConverter;
import picocli.CommandLine.TypeConversionException;

/**
 * A cache instance name as it appears in event-bus addresses ({@code kvpager.<instance>.coordinator}),
 * checked by the same rule as every other source of options ({@link OptionRules#instanceName}), so
 * that the command line takes exactly the names a coordinator and a worker take.
 */
final class InstanceName implements ITypeConverter<String> {

    @Override
    public String convert(String value) {
        try {
            return OptionRules.instanceName("instance", value);
        } catch (IllegalArgumentException e) {
            throw new TypeConversionException(e.getMessage());
        }
    }
}
