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
    void everyPresetIsTheSameForASeedAndDiffersBetweenSeeds() {
        for (TracePreset preset : TracePreset.values()) {
            List<TraceRequest> a = ServingTrace.generate(preset, MODELS, 2, H200, Duration.ofSeconds(20), Duration.ofMillis(20), 7);
            assertThat(a).as(preset.flag()).isEqualTo(ServingTrace.generate(preset, MODELS, 2, H200, Duration.ofSeconds(20),
                    Duration.ofMillis(20), 7));
            assertThat(a).as(preset.flag()).isNotEqualTo(ServingTrace.generate(preset, MODELS, 2, H200, Duration.ofSeconds(20),
                    Duration.ofMillis(20), 8));
            assertThat(a).isSortedAccordingTo((x, y) -> Long.compare(x.arrivalMs(), y.arrivalMs()))
                    .allSatisfy(r -> assertThat(r.arrivalMs()).isBetween(0L, 19_999L));
        }
    }

    @Test
    void rotatingIsTheFirstPreset() {
        assertThat(ServingTrace.generate(TracePreset.ROTATING, MODELS, 2, H200, Duration.ofSeconds(20), Duration.ofMillis(20), 4))
                .isEqualTo(trace(4));
    }

    /** Overlapping: a model's burst starts before the previous model's has ended. */
    @Test
    void overlappingBurstsShareTime() {
        List<TraceRequest> trace = ServingTrace.generate(TracePreset.OVERLAPPING, MODELS, 2, H200, Duration.ofSeconds(20),
                Duration.ofMillis(20), 5);
        long[] first = new long[MODELS.size()];
        long[] last = new long[MODELS.size()];
        for (int m = 0; m < MODELS.size(); m++) {
            int model = m;
            // the burst: arrivals of the busiest model per second, ignoring the trickle
            List<Long> busy = trace.stream().filter(r -> r.model() == model).map(TraceRequest::arrivalMs).sorted().toList();
            first[m] = busy.get(busy.size() / 10);
            last[m] = busy.get(busy.size() * 9 / 10);
        }
        for (int m = 1; m < MODELS.size(); m++) {
            assertThat(first[m]).as("burst of model %d starts before model %d's ends", m, m - 1).isLessThan(last[m - 1]);
            assertThat(first[m]).isGreaterThan(first[m - 1]);
        }
    }

    /** Steady bursts: every model has requests arriving in every second of the run. */
    @Test
    void steadyBurstsKeepABaseForEveryModel() {
        List<TraceRequest> trace = ServingTrace.generate(TracePreset.STEADY_BURSTS, MODELS, 2, H200, Duration.ofSeconds(20),
                Duration.ofMillis(20), 6);
        for (int m = 0; m < MODELS.size(); m++) {
            int model = m;
            for (long second = 0; second < 20; second++) {
                long from = second * 1000;
                assertThat(trace).as("model %d in second %d", m, second)
                        .anySatisfy(r -> {
                            assertThat(r.model()).isEqualTo(model);
                            assertThat(r.arrivalMs()).isBetween(from, from + 999);
                        });
            }
        }
    }

    @Test
    void refusesARunShorterThanTenSteps() {
        assertThatThrownBy(() -> ServingTrace.generate(MODELS, 2, H200, Duration.ofMillis(100), Duration.ofMillis(20), 1))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("too short");
    }
}
