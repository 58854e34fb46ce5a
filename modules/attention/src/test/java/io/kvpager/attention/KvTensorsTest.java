package io.kvpager.attention;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.kvpager.Geometry;
import io.kvpager.Layout;
import org.junit.jupiter.api.Test;

/** Block addresses as the rank worker's views give them: {@code address + page × pageStride + slot × blockStride}. */
class KvTensorsTest {

    private static final long BLOCK = 32 * 1024;

    @Test
    void pageMajorInterleavesEveryLayerAndBufferInsideOneCompoundPage() {
        Geometry geometry = Geometry.of(4, 2, BLOCK, 8, Layout.PAGE_MAJOR);
        KvTensors tensors = KvTensors.of(geometry, 0x1000_0000L);
        assertThat(tensors.blockStride()).isEqualTo(8 * BLOCK);
        assertThat(tensors.pageStride()).isEqualTo(8 * (2L << 20));
        assertThat(tensors.view(0, KvTensors.KEYS)).isEqualTo(0x1000_0000L);
        assertThat(tensors.view(0, KvTensors.VALUES)).isEqualTo(0x1000_0000L + BLOCK);
        assertThat(tensors.view(3, KvTensors.VALUES)).isEqualTo(0x1000_0000L + 7 * BLOCK);
        int perPage = geometry.blocksPerPage();
        assertThat(perPage).isEqualTo(64);
        assertThat(tensors.blockAddress(2, 1, perPage + 3))
                .isEqualTo(0x1000_0000L + 5 * BLOCK + 8 * (2L << 20) + 3 * 8 * BLOCK);
    }

    @Test
    void perLayerHasOneDenseRangePerLayerAndBuffer() {
        Geometry geometry = Geometry.of(2, 2, BLOCK, 8, Layout.PER_LAYER);
        long[] bases = {0x1000L << 20, 0x2000L << 20, 0x3000L << 20, 0x4000L << 20};
        KvTensors tensors = KvTensors.of(geometry, bases);
        assertThat(tensors.blockStride()).isEqualTo(BLOCK);
        assertThat(tensors.pageStride()).isEqualTo(2L << 20);
        assertThat(tensors.view(1, KvTensors.KEYS)).isEqualTo(bases[2]);
        assertThat(tensors.blockAddress(1, 1, 64 * 2 + 5)).isEqualTo(bases[3] + 2 * (2L << 20) + 5 * BLOCK);
    }

    @Test
    void wrongBasesLayersAndBlocksAreRefused() {
        Geometry perLayer = Geometry.of(2, 2, BLOCK, 8, Layout.PER_LAYER);
        assertThatThrownBy(() -> KvTensors.of(perLayer, 1L)).hasMessageContaining("has 4 reserved range(s), got 1");
        KvTensors tensors = KvTensors.of(Geometry.of(2, 2, BLOCK, 8, Layout.PAGE_MAJOR), 1L << 30);
        assertThatThrownBy(() -> tensors.view(2, 0)).hasMessageContaining("layer 2 is outside 0..1");
        assertThatThrownBy(() -> tensors.view(0, 2)).hasMessageContaining("buffer 2 is outside 0..1");
        assertThatThrownBy(() -> tensors.blockAddress(0, 0, 8 * 64)).hasMessageContaining("block 512 is outside the pool's 0..511");
    }
}
