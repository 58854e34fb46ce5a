package io.kvpager.cli;

import io.kvpager.cli.text.ByteSize;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;

class ByteSizeTest {

    @ParameterizedTest
    @CsvSource({
        "40GiB, 42949672960",
        "512MiB, 536870912",
        "1073741824, 1073741824",
        "1.5GiB, 1610612736",
        "2g, 2147483648",
        "64 KiB, 65536",
        "0, 0",
        "3TB, 3298534883328"})
    void readsSizesAsPeopleTypeThem(String text, long bytes) {
        assertThat(ByteSize.parse(text)).isEqualTo(bytes);
    }

    @ParameterizedTest
    @ValueSource(strings = {"", "  ", "GiB", "-1GiB", "12XB", "1.5", "99999999999TiB", "ten"})
    void refusesWhatIsNotASize(String text) {
        assertThatThrownBy(() -> ByteSize.parse(text)).isInstanceOf(IllegalArgumentException.class)
                .hasMessageNotContaining("\n");
    }

    @Test
    void formatsInBinaryUnits() {
        assertThat(ByteSize.format(96)).isEqualTo("96 B");
        assertThat(ByteSize.format(512L << 20)).isEqualTo("512.0 MiB");
        assertThat(ByteSize.format(141L << 30)).isEqualTo("141.0 GiB");
        assertThat(ByteSize.format(3L << 40)).isEqualTo("3.0 TiB");
    }
}
