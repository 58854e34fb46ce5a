package io.kvpager.attention;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.kvpager.Geometry;
import io.kvpager.Layout;
import org.junit.jupiter.api.Test;

class AttentionShapeTest {

    @Test
    void aBlockIsTokensTimesKvHeadsTimesHeadSizeTokenMajor() {
        AttentionShape shape = new AttentionShape(32, 8, 128, 16, KvDtype.BF16);
        assertThat(shape.group()).isEqualTo(4);
        assertThat(shape.rowBytes()).isEqualTo(256);
        assertThat(shape.tokenBytes()).isEqualTo(2048);
        assertThat(shape.blockBytes()).isEqualTo(32 * 1024);
        assertThat(shape.offsetInBlock(0, 0, 0)).isZero();
        assertThat(shape.offsetInBlock(0, 0, 1)).isEqualTo(2);
        assertThat(shape.offsetInBlock(0, 1, 0)).isEqualTo(256);
        assertThat(shape.offsetInBlock(1, 0, 0)).isEqualTo(2048);
        assertThat(shape.offsetInBlock(15, 7, 127)).isEqualTo(32 * 1024 - 2);
        assertThat(shape.queryBytes(64)).isEqualTo(64L * 32 * 128 * 2);
    }

    @Test
    void badShapesSayWhatIsWrong() {
        assertThatThrownBy(() -> new AttentionShape(30, 8, 128, 16, KvDtype.BF16))
                .hasMessageContaining("queryHeads 30 is not a multiple of kvHeads 8");
        assertThatThrownBy(() -> new AttentionShape(34, 2, 128, 16, KvDtype.BF16))
                .hasMessageContaining("17 query heads per KV head; at most 16");
        assertThatThrownBy(() -> new AttentionShape(8, 8, 96, 16, KvDtype.BF16)).hasMessageContaining("64, 128 or 256, got 96");
        assertThatThrownBy(() -> new AttentionShape(8, 0, 128, 16, KvDtype.BF16)).hasMessageContaining("kvHeads must be at least 1");
        assertThatThrownBy(() -> new AttentionShape(8, 8, 128, 0, KvDtype.BF16)).hasMessageContaining("blockTokens");
        assertThatThrownBy(() -> new AttentionShape(8, 8, 128, 16, null)).hasMessageContaining("dtype");
    }

    @Test
    void theCacheMustHoldKAndVBlocksOfExactlyThisShape() {
        AttentionShape shape = new AttentionShape(32, 8, 128, 16, KvDtype.FP16);
        assertThat(shape.requireFits(Geometry.of(4, 2, 32 * 1024, 8, Layout.PAGE_MAJOR))).isSameAs(shape);
        assertThatThrownBy(() -> shape.requireFits(Geometry.of(4, 1, 32 * 1024, 8, Layout.PAGE_MAJOR)))
                .hasMessageContaining("kvBuffers = 2, it has 1");
        assertThatThrownBy(() -> shape.requireFits(Geometry.of(4, 2, 16 * 1024, 8, Layout.PAGE_MAJOR)))
                .hasMessageContaining("blocks are 16384 bytes").hasMessageContaining("make 32768");
    }
}
