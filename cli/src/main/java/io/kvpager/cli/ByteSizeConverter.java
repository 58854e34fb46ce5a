package io.kvpager.cli;

import io.kvpager.cli.text.ByteSize;
import picocli.CommandLine.ITypeConverter;
import picocli.CommandLine.TypeConversionException;

/** Reads a {@link ByteSize} option or parameter; a bad size is a usage error (exit code 2). */
public final class ByteSizeConverter implements ITypeConverter<Long> {

    @Override
    public Long convert(String value) {
        try {
            return ByteSize.parse(value);
        } catch (IllegalArgumentException e) {
            throw new TypeConversionException(e.getMessage());
        }
    }
}
