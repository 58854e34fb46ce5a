package io.kvpager.cli.demo;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The most tokens any policy can decode before the end, by hand. */
class TokenCeilingTest {

    private static final ModelProfile SMALL = new ModelProfile("s", 1, 8, 128, 16);
    private static final ModelProfile LARGE = new ModelProfile("l", 2, 8, 128, 16);

    @Test
    void aRequestDecodesOneTokenPerStepFromTheStepAfterItsPrefillToTheLastBeforeTheEnd() {
        // ticks at 0, 20, ..., 980 ms (50); arriving at 0, one prefill step at tick 0, then 49 decode steps
        assertThat(TokenCeiling.reachable(1000, 20, new TraceRequest(0, 0, 0, 100, 500))).isEqualTo(49);
        // arriving at 19 ms, in the step of tick 0 (a late tick 0 admits it): 50 ticks, 2,049 prompt tokens take 2 prefill steps
        assertThat(TokenCeiling.reachable(1000, 20, new TraceRequest(0, 0, 19, 2049, 500))).isEqualTo(48);
        // arriving at 20 ms, on tick 1: 49 ticks
        assertThat(TokenCeiling.reachable(1000, 20, new TraceRequest(0, 0, 20, 2049, 500))).isEqualTo(47);
        // arriving on a tick, 960: ticks 960 and 980, one prefill step, one token
        assertThat(TokenCeiling.reachable(1000, 20, new TraceRequest(0, 0, 960, 2048, 500))).isEqualTo(1);
        // a run of 1,001 ms has a 51st tick at 1,000
        assertThat(TokenCeiling.reachable(1001, 20, new TraceRequest(0, 0, 960, 2048, 500))).isEqualTo(2);
    }

    @Test
    void aRequestDecodesAtMostItsOutputAndNothingWhenItsPrefillRunsPastTheEnd() {
        assertThat(TokenCeiling.reachable(1000, 20, new TraceRequest(0, 0, 0, 100, 7))).isEqualTo(7);
        // arriving at 985: one tick (980, if late) left, spent on the prefill
        assertThat(TokenCeiling.reachable(1000, 20, new TraceRequest(0, 0, 985, 100, 7))).isZero();
        // 5 prefill steps of a 10,000-token prompt in 3 ticks
        assertThat(TokenCeiling.reachable(1000, 20, new TraceRequest(0, 0, 940, 10_000, 7))).isZero();
    }

    @Test
    void theCeilingSumsEachModelsRequests() {
        TokenCeiling ceiling = TokenCeiling.of(List.of(SMALL, LARGE), Duration.ofSeconds(1), Duration.ofMillis(20), List.of(
                new TraceRequest(0, 0, 0, 100, 500), new TraceRequest(1, 1, 20, 2049, 500), new TraceRequest(2, 0, 0, 100, 7)));
        assertThat(ceiling.perModel()).containsExactly(49L + 7, 47L);
        assertThat(ceiling.all()).isEqualTo(103);
        assertThat(ceiling.forModel(1)).isEqualTo(47);
        assertThat(ceiling).hasToString("the most any policy can decode before the end (each request admitted in the step it arrives in, never "
                + "waiting, a token per 20 ms step after its prefill): s 56 tokens, l 47; all 103");
    }

    @Test
    void aStepOrDurationBelowOneMillisecondIsRefused() {
        TraceRequest request = new TraceRequest(0, 0, 0, 100, 7);
        assertThatThrownBy(() -> TokenCeiling.reachable(1000, 0, request)).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("at least 1 ms");
        assertThatThrownBy(() -> TokenCeiling.reachable(0, 20, request)).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> new TokenCeiling(List.of("a"), List.of(), Duration.ofMillis(20))).isInstanceOf(IllegalArgumentException.class)
                .hasMessage("1 models but 0 ceilings");
    }
}
