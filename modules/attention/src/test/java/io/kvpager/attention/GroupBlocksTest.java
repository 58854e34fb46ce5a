package io.kvpager.attention;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;

class GroupBlocksTest {

    @Test
    void addAndRemoveAreAllOrNothing() {
        GroupBlocks held = new GroupBlocks(10);
        held.add(1, 2, 3);
        assertThatThrownBy(() -> held.add(4, 2)).hasMessageContaining("block 2 is already held");
        assertThat(held.holds(4)).as("nothing added by the refused call").isFalse();
        assertThatThrownBy(() -> held.remove(1, 5)).hasMessageContaining("block 5 is not held");
        assertThat(held.holds(1)).as("nothing removed by the refused call").isTrue();
        assertThatThrownBy(() -> held.add(10)).hasMessageContaining("block 10 is outside the pool's 0..9");
        held.remove(1, 2);
        assertThat(held.size()).isEqualTo(1);
        assertThat(held.holds(3)).isTrue();
        assertThat(held.holds(-1)).isFalse();
        assertThatThrownBy(() -> new GroupBlocks(0)).hasMessageContaining("at least 1");
    }
}
