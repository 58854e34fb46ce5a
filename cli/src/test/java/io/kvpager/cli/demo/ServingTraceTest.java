package io.kvpager.cli.demo;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;

class ServingTraceTest {

    private static final long H200 = 141L << 30;
    private static final List<ModelProfile> MODELS = ModelProfile.PRESETS;

    private static List<TraceRequest> trace(long seed) {
        return ServingTrace.generate(MODELS, 2, H200, Duration.ofSeconds(20), Duration.ofMillis(20), seed);
    }

    @Test
    void theSameSeedGivesTheSameTrace() {
        assertThat(trace(7)).isEqualTo(trace(7)).isNotEqualTo(trace(8));
    }

    @Test
    void requestsComeInArrivalOrderWithinTheRun() {
        List<TraceRequest> trace = trace(1);
        assertThat(trace).isSortedAccordingTo((a, b) -> Long.compare(a.arrivalMs(), b.arrivalMs()));
        assertThat(trace).allSatisfy(r -> assertThat(r.arrivalMs()).isBetween(0L, 20_000L));
        assertThat(trace.stream().map(TraceRequest::id).distinct().count()).isEqualTo(trace.size());
    }

    @Test
    void everyModelHasARequestAtTheStart() {
        for (int m = 0; m < MODELS.size(); m++) {
            int model = m;
            assertThat(trace(3)).anySatisfy(r -> {
                assertThat(r.model()).isEqualTo(model);
                assertThat(r.arrivalMs()).isZero();
            });
        }
    }

    @Test
    void eachModelBurstsBeyondAStaticShareAtItsOwnTime() {
        List<TraceRequest> trace = trace(5);
        long[] burstStart = new long[MODELS.size()];
        for (int m = 0; m < MODELS.size(); m++) {
            ModelProfile model = MODELS.get(m);
            int index = m;
            // Demand if every request of the model's busiest 2-second window were live at once.
            long best = 0;
            for (long window = 0; window < 20_000; window += 500) {
                long from = window;
                long tokens = trace.stream().filter(r -> r.model() == index && r.arrivalMs() >= from && r.arrivalMs() < from + 2000)
                        .mapToLong(r -> r.promptTokens() + r.outputTokens()).sum();
                if (tokens * model.bytesPerToken(2) > best) {
                    best = tokens * model.bytesPerToken(2);
                    burstStart[m] = from;
                }
            }
            assertThat(best).as("peak demand of %s", model.name()).isGreaterThan(H200 / MODELS.size());
        }
        assertThat(burstStart).doesNotHaveDuplicates();
    }

    @Test
    void refusesARunShorterThanTenSteps() {
        assertThatThrownBy(() -> ServingTrace.generate(MODELS, 2, H200, Duration.ofMillis(100), Duration.ofMillis(20), 1))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("too short");
    }
}
