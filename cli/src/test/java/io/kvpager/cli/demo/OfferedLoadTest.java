package io.kvpager.cli.demo;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import io.kvpager.KvFormat;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The offered load in pages at the step the GPU takes under it, by hand, and the traces sized to a load. */
class OfferedLoadTest {

    /** 1 layer, 8 KV heads of 128, 16-token blocks at tp 1: 32 KiB blocks, 64 a page, 1,024 tokens a page, 4 MiB a page id, 4 KiB a token. */
    private static final ModelProfile SMALL = new ModelProfile("t", 1, 8, 128, 16);
    private static final long MIB = 1L << 20;

    @Test
    void aRequestHoldsItsTokensRoundedUpToPagesForEveryStepItLives() {
        // prompt 1,000: one prefill chunk at 1 page; decode steps at 1,001..1,024 tokens (24 at 1 page), 1,025..1,100 (76 at 2 pages)
        assertThat(OfferedLoad.pageSteps(1024, 1000, 100)).isEqualTo(1 + 24 + 76 * 2);
        // prompt 3,000: two prefill chunks at 3 pages; 3,001..3,072 at 3 pages (72), 3,073..3,100 at 4 (28)
        assertThat(OfferedLoad.pageSteps(1024, 3000, 100)).isEqualTo(2 * 3 + 72 * 3 + 28 * 4);
        assertThat(OfferedLoad.pageSteps(1024, 1024, 1)).isEqualTo(1 + 2);
    }

    @Test
    void oneRequestOverARunOffersItsPageStepsAtTheEnginesStepWhenTheGpuIsIdle() {
        assertThat(SMALL.geometry(1, 1).blocksPerPage()).isEqualTo(64);
        assertThat(SMALL.bytesPerPageId(1)).isEqualTo(4 * MIB);
        OfferedLoad.Scale scale = new OfferedLoad.Scale(List.of(SMALL), 1, WeightFormat.NONE, 8 * MIB, Duration.ofSeconds(10),
                Duration.ofMillis(20), SimAttention.H200_BANDWIDTH_BYTES_PER_S);
        OfferedLoad offered = OfferedLoad.of(scale, List.of(new TraceRequest(0, 0, 0, 1000, 100)));
        // 177 page-steps of 4 MiB, 20 ms each (one launch of 20 µs and 430 MB of KV read over the run: far below the step), over 10 s:
        // 0.354 pages on average, of the caches' 2; the tokens alone (1,050 on average over 101 steps) said 0.104
        assertThat(offered.step()).isEqualTo(Duration.ofMillis(20));
        assertThat(offered.all()).isCloseTo(177 * 4.0 * 20 / 10_000 / 8, within(1e-12));
        assertThat(offered.perModel()).containsExactly(offered.all());
    }

    @Test
    void theStepUnderLoadIsTheWeightsAndLaunchesOfEveryModelPlusTheKvItsOwnLoadReads() {
        // 45.5 billion FP8 parameters at 4.55 TB/s: 10 ms; one launch 0.02 ms
        ModelProfile heavy = new ModelProfile("w", 1, 8, 128, 16, KvFormat.BF16, 45_500_000_000L);
        OfferedLoad.Scale scale = new OfferedLoad.Scale(List.of(heavy), 1, WeightFormat.FP8, 86_000_000_000L, Duration.ofSeconds(10),
                Duration.ofMillis(1), SimAttention.H200_BANDWIDTH_BYTES_PER_S);
        OfferedLoad.Demand demand = new OfferedLoad.Demand(1);
        demand.pageByteSteps[0] = 1;
        assertThat(OfferedLoad.stepMs(scale, demand)).isCloseTo(10.02, within(1e-9));
        // reading half a second of KV per second of run at 4.3 TB/s: s = 10.02 + s / 2
        demand.readByteSteps = 0.5 * 10_000 * 4.3e9;
        assertThat(OfferedLoad.stepMs(scale, demand)).isCloseTo(20.04, within(1e-9));
        // more than the caches hold cannot be read: at most their 86 GB, 20 ms
        demand.readByteSteps = 2 * 10_000 * 4.3e9;
        assertThat(OfferedLoad.stepMs(scale, demand)).isCloseTo(30.02, within(1e-9));
        // a model with no request reads no weights
        OfferedLoad.Scale two = new OfferedLoad.Scale(List.of(heavy, SMALL), 1, WeightFormat.FP8, 43_000_000_000L, Duration.ofSeconds(10),
                Duration.ofMillis(1), SimAttention.H200_BANDWIDTH_BYTES_PER_S);
        OfferedLoad.Demand onlySmall = new OfferedLoad.Demand(2);
        onlySmall.pageByteSteps[1] = 1;
        assertThat(OfferedLoad.stepMs(two, onlySmall)).isEqualTo(1.0);
    }

    @Test
    void aSlowerGpusStepReadsTheSameKvForLongerSoItsTraceIsSizedToTheBandwidthItNames() {
        // the demand of the test above, half a second of KV per second of run at 4.3 TB/s, on a GPU that reads at 2.15 TB/s:
        // s = 10.02 + s, which no step satisfies: the step reads all the caches hold, 40 ms, plus the weights and the launch
        ModelProfile heavy = new ModelProfile("w", 1, 8, 128, 16, KvFormat.BF16, 45_500_000_000L);
        OfferedLoad.Demand demand = new OfferedLoad.Demand(1);
        demand.pageByteSteps[0] = 1;
        demand.readByteSteps = 0.5 * 10_000 * 4.3e9;
        OfferedLoad.Scale h200 = new OfferedLoad.Scale(List.of(heavy), 1, WeightFormat.FP8, 86_000_000_000L, Duration.ofSeconds(10),
                Duration.ofMillis(1), SimAttention.H200_BANDWIDTH_BYTES_PER_S);
        OfferedLoad.Scale slower = new OfferedLoad.Scale(List.of(heavy), 1, WeightFormat.FP8, 86_000_000_000L, Duration.ofSeconds(10),
                Duration.ofMillis(1), 2.15e12);
        assertThat(OfferedLoad.stepMs(h200, demand)).isCloseTo(20.04, within(1e-9));
        assertThat(OfferedLoad.stepMs(slower, demand)).isCloseTo(50.02, within(1e-9));
        // a quarter of it: s = 10.02 + s / 2 at 2.15 TB/s, as half of it was at 4.3
        demand.readByteSteps = 0.25 * 10_000 * 4.3e9;
        assertThat(OfferedLoad.stepMs(slower, demand)).isCloseTo(20.04, within(1e-9));
    }

    @Test
    void everyPresetIsSizedToTheLoadAsked() {
        OfferedLoad.Scale scale = new OfferedLoad.Scale(ModelProfile.PRESETS, 2, WeightFormat.FP8, 42L << 30, Duration.ofSeconds(30),
                Duration.ofMillis(20), SimAttention.H200_BANDWIDTH_BYTES_PER_S);
        for (TracePreset preset : TracePreset.values()) {
            for (double load : new double[] {0.5, 0.75, 1.2}) {
                TraceReplay.Plan plan = TraceChoice.of(preset).plan(scale, load, 42);
                OfferedLoad offered = OfferedLoad.of(scale, plan.requests());
                assertThat(offered.all()).as("%s at %s", preset.flag(), load).isCloseTo(load, within(load * 0.03));
                assertThat(offered.step()).as("%s at %s", preset.flag(), load).isGreaterThan(Duration.ofMillis(20));
                assertThat(plan.description()).contains(String.format(java.util.Locale.ROOT, "to offer %.2fx the caches' memory", load));
            }
        }
    }
}
