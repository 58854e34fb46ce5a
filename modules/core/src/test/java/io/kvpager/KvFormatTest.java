package io.kvpager;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;

class KvFormatTest {

    @Test
    void blockBytesCountTheElementsAndTheScales() {
        assertThat(KvFormat.BF16.blockBytes(16, 8, 128)).isEqualTo(16 * 8 * 128 * 2);
        assertThat(KvFormat.FP8.blockBytes(32, 8, 128)).isEqualTo(32 * 8 * 128 + 32 * 8 * 4);
        assertThat(KvFormat.FP8.tokenBytes(8, 128)).isEqualTo(8 * 132);
        assertThatThrownBy(() -> KvFormat.FP8.blockBytes(0, 8, 128)).isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void parsesTheOptionsSpellingAndRefusesOthers() {
        assertThat(KvFormat.parse("bf16")).isEqualTo(KvFormat.BF16);
        assertThat(KvFormat.parse(" FP8 ")).isEqualTo(KvFormat.FP8);
        assertThat(KvFormat.parse("e4m3")).isEqualTo(KvFormat.FP8);
        assertThat(KvFormat.FP8.optionName()).isEqualTo("fp8");
        assertThatThrownBy(() -> KvFormat.parse("int4")).isInstanceOf(IllegalArgumentException.class)
                .hasMessage("kvDtype must be one of [bf16, fp8] (fp8 is e4m3), got 'int4'");
        assertThatThrownBy(() -> KvFormat.parse(null)).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("got null");
    }
}
