package io.kvpager.attention;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

class E4m3Test {

    @Test
    void everyFiniteCodeDecodesAndEncodesBackToItself() {
        for (int code = 0; code < 256; code++) {
            if ((code & 0x7f) == 0x7f) {
                assertThat(E4m3.decode((byte) code)).isNaN();
                continue;
            }
            double value = E4m3.decode((byte) code);
            assertThat(E4m3.encode((float) value) & 0xff).as("code %02x (%s)", code, value).isEqualTo(code);
        }
    }

    @Test
    void knownValues() {
        assertThat(E4m3.decode((byte) 0x7e)).isEqualTo(448.0);
        assertThat(E4m3.decode((byte) 0x38)).isEqualTo(1.0);
        assertThat(E4m3.decode((byte) 0x01)).isEqualTo(0x1p-9);
        assertThat(E4m3.decode((byte) 0x08)).isEqualTo(0x1p-6);
        assertThat(E4m3.decode((byte) 0xb8)).isEqualTo(-1.0);
    }

    @Test
    void roundsToNearestEvenAndSaturates() {
        // 1.0625 lies halfway between 1 (mantissa 0) and 1.125 (mantissa 1): to the even one
        assertThat(E4m3.decode(E4m3.encode(1.0625f))).isEqualTo(1.0);
        assertThat(E4m3.decode(E4m3.encode(1.1875f))).isEqualTo(1.25);
        assertThat(E4m3.decode(E4m3.encode(1.07f))).isEqualTo(1.125);
        assertThat(E4m3.decode(E4m3.encode(1e6f))).isEqualTo(448.0);
        assertThat(E4m3.decode(E4m3.encode(-1e6f))).isEqualTo(-448.0);
        assertThat(E4m3.decode(E4m3.encode(0x1p-11f))).isEqualTo(0.0);
        assertThat(E4m3.decode(E4m3.encode(3 * 0x1p-11f))).isEqualTo(0x1p-9);
        // 464 is halfway between 448 and 480, which e4m3 does not have: saturates
        assertThat(E4m3.decode(E4m3.encode(460f))).isEqualTo(448.0);
    }

    @Test
    void aRowQuantizesToItsLargestMagnitude() {
        float[] row = {0.5f, -2f, 1f, 0f};
        byte[] codes = new byte[4];
        float scale = E4m3.quantize(row, 0, 4, codes, 0);
        assertThat(scale).isEqualTo(2f / 448f);
        assertThat(E4m3.decode(codes[1])).isEqualTo(-448.0);
        for (int i = 0; i < 4; i++) {
            assertThat(E4m3.decode(codes[i]) * scale).isCloseTo(row[i], org.assertj.core.data.Offset.offset(Math.abs(row[i]) / 16 + 1e-9));
        }
        assertThat(E4m3.quantize(new float[4], 0, 4, codes, 0)).as("a row of zeros").isZero();
        assertThat(codes).containsOnly((byte) 0);
    }
}
