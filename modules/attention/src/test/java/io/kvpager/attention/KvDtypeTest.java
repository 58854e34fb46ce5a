package io.kvpager.attention;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

class KvDtypeTest {

    @Test
    void bf16RoundsToNearestEven() {
        assertThat(KvDtype.BF16.encode(1.0f)).isEqualTo((short) 0x3f80);
        assertThat(KvDtype.BF16.decode((short) 0x3f80)).isEqualTo(1.0f);
        assertThat(KvDtype.BF16.encode(-2.5f)).isEqualTo((short) 0xc020);
        // 1 + 2^-8 lies halfway between 1 and 1 + 2^-7: ties go to the even mantissa, 1.
        assertThat(KvDtype.BF16.encode(1.0f + 0x1p-8f)).isEqualTo((short) 0x3f80);
        assertThat(KvDtype.BF16.encode(1.0f + 0x1p-8f + 0x1p-12f)).isEqualTo((short) 0x3f81);
        assertThat(Float.isNaN(KvDtype.BF16.decode(KvDtype.BF16.encode(Float.NaN)))).isTrue();
    }

    @Test
    void fp16IsIeeeHalf() {
        assertThat(KvDtype.FP16.encode(1.0f)).isEqualTo((short) 0x3c00);
        assertThat(KvDtype.FP16.decode((short) 0xc000)).isEqualTo(-2.0f);
        assertThat(KvDtype.FP16.decode(KvDtype.FP16.encode(0.1f))).isCloseTo(0.1f, org.assertj.core.api.Assertions.within(1e-4f));
    }
}
