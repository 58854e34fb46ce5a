package io.kvpager.cli;

import io.kvpager.cli.text.ByteSize;
import picocli.CommandLine.ITypeConverter;
import picocli.CommandLine.TypeConversionException;

/**
 * A cache's guaranteed share of each GPU as typed: a percent of the GPU's budget ({@code 30%}) or a
 * size ({@code 40GiB}); docs/sharing.md.
 */
public final class GuaranteeConverter implements ITypeConverter<GuaranteeConverter.Typed> {

    /** What was typed: a percent, or bytes; the other is {@code null}. */
    public record Typed(Integer percent, Long bytes) {
    }

    @Override
    public Typed convert(String value) {
        String text = value.strip();
        if (text.endsWith("%")) {
            try {
                return new Typed(Integer.parseInt(text.substring(0, text.length() - 1).strip()), null);
            } catch (NumberFormatException e) {
                throw new TypeConversionException("'" + value + "' is not a percent: a whole number and %, e.g. 30%");
            }
        }
        try {
            return new Typed(null, ByteSize.parse(text));
        } catch (IllegalArgumentException e) {
            throw new TypeConversionException("'" + value + "' is neither a percent (30%) nor a size (40GiB): " + e.getMessage());
        }
    }
}
