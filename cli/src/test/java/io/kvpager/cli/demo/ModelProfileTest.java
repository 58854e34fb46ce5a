package io.kvpager.cli.demo;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.kvpager.KvFormat;
import io.kvpager.Layout;
import org.junit.jupiter.api.Test;

class ModelProfileTest {

    @Test
    void shardsHeadsOverTensorParallelRanks() {
        ModelProfile seventy = ModelProfile.preset("70B");
        assertThat(seventy.blockBytes(2)).isEqualTo(16 * 4 * 128 * 2);
        assertThat(seventy.headsPerRank(16)).isEqualTo(1);
        var geometry = seventy.geometry(2, 100);
        assertThat(geometry.layout()).isEqualTo(Layout.PAGE_MAJOR);
        assertThat(geometry.blocksPerPage()).isEqualTo(128);
        assertThat(seventy.bytesPerPageId(2)).isEqualTo(2 * geometry.bytesPerPageId());
        assertThat(seventy.bytesPerToken(2)).isEqualTo(80L * 2 * 8 * 128 * 2);
    }

    @Test
    void fp8BlocksHoldAboutTwiceTheTokensPerGiB() {
        ModelProfile bf16 = ModelProfile.SEVENTY_B;
        ModelProfile fp8 = bf16.withKv(KvFormat.FP8);
        // 16 tokens × 4 heads × 128 e4m3 elements, then 16 × 4 fp32 scales
        assertThat(fp8.blockBytes(2)).isEqualTo(16 * 4 * 128 + 16 * 4 * 4);
        assertThat(fp8.bytesPerToken(2)).isEqualTo(80L * 2 * 8 * (128 + 4));
        assertThat(bf16.tokensPerGiB(2)).isEqualTo(3_276);
        assertThat((double) fp8.tokensPerGiB(2) / bf16.tokensPerGiB(2)).isGreaterThanOrEqualTo(1.9);
        assertThat(fp8.name()).isEqualTo(bf16.name());
    }

    @Test
    void pagesToFillCoverTheGpu() {
        ModelProfile seven = ModelProfile.SEVEN_B;
        int pages = seven.pagesToFill(2, 141L << 30);
        assertThat(pages * seven.bytesPerPageId(2)).isLessThanOrEqualTo(141L << 30)
                .isGreaterThan((141L << 30) - seven.bytesPerPageId(2));
    }

    @Test
    void namesThePresetsWhenOneIsUnknown() {
        assertThatThrownBy(() -> ModelProfile.preset("405b")).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("7b, 13b, 70b");
    }
}
