package io.kvpager.cli;

import io.kvpager.cli.text.TextTable;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;

class TextTableTest {

    @Test
    void padsColumnsAndRightAlignsNumbers() {
        String text = new TextTable("model", "allocs", "peak")
                .row("7b", 12, "1.5 GiB")
                .row("70b", 1234, "96.0 GiB")
                .render();
        assertThat(text).isEqualTo("""
                model  allocs      peak
                -----  ------  --------
                7b         12   1.5 GiB
                70b      1234  96.0 GiB
                """);
    }

    @Test
    void leftAlignsText() {
        assertThat(new TextTable("rank", "health").row("pp0/tp0", "up").row("pp0/tp1", "down: timeout").render())
                .contains("pp0/tp0  up\n").contains("pp0/tp1  down: timeout\n");
    }

    @Test
    void refusesRowsOfTheWrongWidth() {
        assertThatThrownBy(() -> new TextTable("a", "b").row("only one")).isInstanceOf(IllegalArgumentException.class);
    }
}
