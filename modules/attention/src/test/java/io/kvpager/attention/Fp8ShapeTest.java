package io.kvpager.attention;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.kvpager.Geometry;
import io.kvpager.KvFormat;
import io.kvpager.Layout;
import org.junit.jupiter.api.Test;

/** FP8 blocks' sizes and the checks that refuse what the FP8 kernels were not built for, on the CPU. */
class Fp8ShapeTest {

    private final AttentionShape fp8 = new AttentionShape(32, 8, 128, 32, KvDtype.BF16, KvFormat.FP8);

    @Test
    void aBlockHoldsItsElementsThenItsScales() {
        assertThat(fp8.rowBytes()).isEqualTo(128);
        assertThat(fp8.blockDataBytes()).isEqualTo(32 * 8 * 128);
        assertThat(fp8.blockBytes()).isEqualTo(32 * 8 * 128 + 32 * 8 * 4);
        assertThat(fp8.offsetInBlock(3, 2, 5)).isEqualTo((3 * 8 + 2) * 128 + 5);
        assertThat(fp8.scaleOffsetInBlock(3, 2)).isEqualTo(32 * 8 * 128 + (2 * 32 + 3) * 4);
        assertThat(fp8.queryBytes(2)).as("queries stay bf16").isEqualTo(2 * 32 * 128 * 2);
        assertThat(fp8.tokenBytesWithScales()).isEqualTo(8 * (128 + 4));
        assertThat(DecodeBatch.of(new int[][] {{0}}, new int[] {10}).kvBytes(fp8)).isEqualTo(10L * 8 * 132 * 2);
    }

    @Test
    void twicetheTokensPerPage() {
        AttentionShape bf16 = new AttentionShape(32, 8, 128, 16, KvDtype.BF16);
        long bf16Tokens = (2L << 20) / bf16.blockBytes() * 16;
        long fp8Tokens = (2L << 20) / fp8.blockBytes() * 32;
        assertThat((double) fp8Tokens / bf16Tokens).isGreaterThanOrEqualTo(1.9);
    }

    @Test
    void fp8PagesTakeBf16QueriesOnly() {
        assertThatThrownBy(() -> new AttentionShape(8, 2, 128, 16, KvDtype.FP16, KvFormat.FP8))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("bf16");
    }

    @Test
    void blocksWithoutRoomForTheScalesAreRefused() {
        Geometry noScales = Geometry.of(2, 2, fp8.blockDataBytes(), 4, Layout.PAGE_MAJOR);
        assertThatThrownBy(() -> fp8.requireFits(noScales))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("32 × 8 scales × 4 bytes make " + fp8.blockBytes());
        Geometry bf16Blocks = Geometry.of(2, 2, fp8.withKv(KvFormat.BF16).blockBytes(), 4, Layout.PAGE_MAJOR);
        assertThatThrownBy(() -> fp8.requireFits(bf16Blocks)).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("FP8 e4m3");
        assertThatThrownBy(() -> fp8.withKv(KvFormat.BF16).scaleOffsetInBlock(0, 0)).isInstanceOf(IllegalStateException.class);
    }

    @Test
    void theKernelIsBuiltForFp8AndOnlyChunked() {
        Geometry geometry = Geometry.of(2, 2, fp8.blockBytes(), 4, Layout.PAGE_MAJOR);
        KernelOptions options = KernelOptions.of(fp8, geometry);
        assertThat(options.defines()).contains("-DKV_FP8=1");
        assertThat(KernelOptions.of(fp8.withKv(KvFormat.BF16), Geometry.of(2, 2, fp8.withKv(KvFormat.BF16).blockBytes(), 4,
                Layout.PAGE_MAJOR)).defines()).contains("-DKV_FP8=0");
        assertThat(options.wholeBlockOptions()).isEmpty();
        assertThatThrownBy(() -> options.wholeBlocks(3, 0)).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("FP8 pages use the chunked kernel");
        // the ring: 3 warps (FP8's default) × 2 stages × (K and V tiles of 16 × 128 bytes + 16 K and 16 V scales)
        assertThat(options.warps()).isEqualTo(3);
        assertThat(options.sharedBytes()).isEqualTo(3 * 2 * (2 * 16 * 128 + 2 * 16 * 4));
    }

    @Test
    void appendSlotsAreCheckedAgainstTheCacheAndTheHeldBlocks() {
        Geometry geometry = Geometry.of(2, 2, fp8.blockBytes(), 1, Layout.PAGE_MAJOR);
        GroupBlocks held = new GroupBlocks(geometry.totalBlocks());
        held.add(2, 5);
        AppendSlots.check(new long[] {2 * 32, 2 * 32 + 31, 5 * 32 + 7}, 32, geometry, held);
        assertThatThrownBy(() -> AppendSlots.check(new long[0], 32, geometry, held))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("at least one token");
        assertThatThrownBy(() -> AppendSlots.check(new long[] {2 * 32, -1}, 32, geometry, held))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("token 1 has slot -1, outside");
        assertThatThrownBy(() -> AppendSlots.check(new long[] {(long) geometry.totalBlocks() * 32}, 32, geometry, held))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("outside the pool's");
        assertThatThrownBy(() -> AppendSlots.check(new long[] {3 * 32}, 32, geometry, held))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("block 3, which is not allocated");
        assertThatThrownBy(() -> AppendSlots.check(new long[] {5 * 32 + 1, 2 * 32, 5 * 32 + 1}, 32, geometry, held))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("token 2 names slot 161 again");
        assertThatThrownBy(() -> AppendSlots.check(new long[] {2 * 32}, 32, geometry, new GroupBlocks(7)))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("pool of 7 blocks");
    }
}
