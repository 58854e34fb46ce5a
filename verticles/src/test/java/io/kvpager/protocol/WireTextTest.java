package io.kvpager.protocol;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;

class WireTextTest {

    @Test
    void shortTextIsQuotedWhole() {
        assertThat(WireText.cut("alloc")).isEqualTo("alloc");
        assertThat(WireText.cut("a".repeat(WireText.MOST))).hasSize(WireText.MOST);
        assertThat(WireText.cut(null)).isNull();
    }

    @Test
    void longTextIsCutWithItsLength() {
        String cut = WireText.cut("x".repeat(8192));
        assertThat(cut).startsWith("x".repeat(WireText.MOST)).endsWith("…(8192 chars)").hasSize(WireText.MOST + 13);
    }

    @Test
    void anUnknownActionOfEightKilobytesIsNamedInAShortMessage() {
        String name = "y".repeat(8192);
        assertThatThrownBy(() -> WorkerAction.of(name)).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("…(8192 chars)")
                .satisfies(e -> assertThat(e.getMessage().length()).isLessThan(400));
    }
}
