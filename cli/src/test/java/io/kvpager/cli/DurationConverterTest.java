package io.kvpager.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;
import picocli.CommandLine.TypeConversionException;

class DurationConverterTest {

    @ParameterizedTest
    @CsvSource({"20s, 20000", "500ms, 500", "2m, 120000", "20, 20000", "PT3S, 3000", "1h, 3600000"})
    void readsDurations(String text, long millis) {
        assertThat(new DurationConverter().convert(text)).isEqualTo(Duration.ofMillis(millis));
    }

    @ParameterizedTest
    @ValueSource(strings = {"0s", "-3s", "soon", "3 weeks", "PT-1S"})
    void refusesOthers(String text) {
        assertThatThrownBy(() -> new DurationConverter().convert(text)).isInstanceOf(TypeConversionException.class);
    }
}
