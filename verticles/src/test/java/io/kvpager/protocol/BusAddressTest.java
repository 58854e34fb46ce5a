package io.kvpager.protocol;

import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;

import static org.assertj.core.api.Assertions.assertThat;

/** Addresses are written in one place and read back by the same class. */
class BusAddressTest {

    @ParameterizedTest
    @CsvSource({"llama-7b,0,1", "a,0,0", "m_2,7,15", "x,123456789,987654321"})
    void aRankAddressReadsBackAsTheRankItWasWrittenFor(String instance, int pp, int tp) {
        String address = BusAddress.rank(instance, pp, tp);
        assertThat(address).isEqualTo("kvpager." + instance + ".pp" + pp + ".tp" + tp)
                .isEqualTo(WorkerProtocol.rankAddress(instance, pp, tp));
        BusAddress parsed = BusAddress.parse(address);
        assertThat(parsed).isEqualTo(new BusAddress.Rank(instance, pp, tp));
        assertThat(parsed.address()).isEqualTo(address);
        assertThat(((BusAddress.Rank) parsed).rankName()).isEqualTo("pp" + pp + "/tp" + tp);
    }

    @ParameterizedTest
    @ValueSource(strings = {"llama-7b", "a", "pp0", "tp1", "coordinator"})
    void aCoordinatorAddressReadsBackAsItsInstance(String instance) {
        String address = BusAddress.coordinator(instance);
        assertThat(address).isEqualTo("kvpager." + instance + ".coordinator").isEqualTo(WorkerProtocol.coordinatorAddress(instance));
        assertThat(BusAddress.parse(address)).isEqualTo(new BusAddress.Coordinator(instance));
    }

    @ParameterizedTest
    @ValueSource(strings = {"", "kvpager.", "kvpager.coordinator", "kvpager..coordinator", "kvpager.a.b.coordinator",
            "kvpager.a.pp0", "kvpager.a.tp0", "kvpager.a.pp.tp0", "kvpager.a.pp0.tp", "kvpager.a.pp-1.tp0", "kvpager.a.pp0.tp+1",
            "kvpager.a.pp1.tp1234567890", "kvpager..pp0.tp0", "kvpager.a.b.pp0.tp0", "kvpager.a b.pp0.tp0", "other.a.pp0.tp0",
            "kvpager.gpu-lease.owner#1.pool", "kvpager.gpu-shares", "kvpager.limits", "kvpager.a.reclaim", "__vertx.reply.1"})
    void anyOtherAddressIsNone(String address) {
        assertThat(BusAddress.parse(address)).isNull();
    }

    @ParameterizedTest
    @ValueSource(strings = {"kvpager.a.pp0.tp1x", "kvpager.a.pp0x.tp1"})
    void trailingTextAfterARankNumberIsNone(String address) {
        assertThat(BusAddress.parse(address)).isNull();
        assertThat(BusAddress.parse(null)).isNull();
    }
}
