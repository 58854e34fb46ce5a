package io.kvpager.cli.demo;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** The demo engine's two measuring properties: their defaults, and a clear refusal of a bad value. */
class ModelServerSettingsTest {

    @AfterEach
    void clear() {
        System.clearProperty(ModelServer.TURNOVER_PROPERTY);
        System.clearProperty(ModelServer.PLACEMENT_PROPERTY);
    }

    @Test
    void unsetTheEngineGrowsNearAndPreemptsAtTheNextStep() {
        assertThat(ModelServer.turnoverPercent()).isZero();
        assertThat(ModelServer.growNear()).isTrue();
    }

    @Test
    void aPercentFrom0To100AndEitherPlacementAreTaken() {
        System.setProperty(ModelServer.TURNOVER_PROPERTY, " 50 ");
        System.setProperty(ModelServer.PLACEMENT_PROPERTY, "best-fit");
        assertThat(ModelServer.turnoverPercent()).isEqualTo(50);
        assertThat(ModelServer.growNear()).isFalse();
        System.setProperty(ModelServer.TURNOVER_PROPERTY, "100");
        System.setProperty(ModelServer.PLACEMENT_PROPERTY, "near");
        assertThat(ModelServer.turnoverPercent()).isEqualTo(100);
        assertThat(ModelServer.growNear()).isTrue();
    }

    @Test
    void aBadValueIsRefusedNamingThePropertyAndTheValue() {
        for (String bad : new String[] {"-1", "101", "half"}) {
            System.setProperty(ModelServer.TURNOVER_PROPERTY, bad);
            assertThatThrownBy(ModelServer::turnoverPercent).isInstanceOf(IllegalArgumentException.class)
                    .hasMessage("kvpager.demo.turnoverPercent must be a percent from 0 to 100, got '" + bad + "'");
        }
        System.setProperty(ModelServer.PLACEMENT_PROPERTY, "nearest");
        assertThatThrownBy(ModelServer::growNear).isInstanceOf(IllegalArgumentException.class)
                .hasMessage("kvpager.demo.placement must be near or best-fit, got 'nearest'");
    }
}
