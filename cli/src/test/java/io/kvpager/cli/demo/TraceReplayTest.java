package io.kvpager.cli.demo;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.StringReader;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class TraceReplayTest {

    private static final long H200 = 141L << 30;
    private static final List<ModelProfile> MODELS = ModelProfile.PRESETS;

    @TempDir
    Path dir;

    private static TraceReplay parse(String text) throws IOException {
        return TraceReplay.parse("test.csv", new BufferedReader(new StringReader(text)));
    }

    @Test
    void aGoodFileIsReadInArrivalOrderFromItsFirstRequest() throws IOException {
        TraceReplay replay = parse("""
                TIMESTAMP,ContextTokens,GeneratedTokens
                2023-11-16 18:15:46.6805900,374,44
                2023-11-16 18:15:50.9951690,396,109

                2023-11-16 18:15:48,12,1
                """);
        assertThat(replay.rows()).containsExactly(
                new TraceReplay.Row(0, 374, 44),
                new TraceReplay.Row(1_319_410, 12, 1),
                new TraceReplay.Row(4_314_579, 396, 109));
        assertThat(replay.spanMicros()).isEqualTo(4_314_579);
    }

    @Test
    void badRowsAreRefusedWithTheirLineNumbers() {
        assertThatThrownBy(() -> parse("""
                TIMESTAMP,ContextTokens,GeneratedTokens
                2023-11-16 18:15:46.6805900,374,44
                2023-11-16 18:15:47,0,10
                yesterday,10,10
                2023-11-16 18:15:48,12
                2023-11-16 18:15:49,12,lots
                """))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageStartingWith("--trace test.csv has 4 bad rows (")
                .hasMessageContaining("line 3: ContextTokens must be at least 1, got 0")
                .hasMessageContaining("line 4: ")
                .hasMessageContaining("line 5: expected 3 fields")
                .hasMessageContaining("line 6: GeneratedTokens is not a whole number: 'lots'");
    }

    @Test
    void anEmptyFileOrOneWithoutRequestsOrHeaderIsRefused() {
        assertThatThrownBy(() -> parse("")).hasMessageContaining("is empty");
        assertThatThrownBy(() -> parse("TIMESTAMP,ContextTokens,GeneratedTokens\n")).hasMessageContaining("has a header but no request");
        assertThatThrownBy(() -> parse("time,in,out\n2023-11-16 18:15:46,1,1\n")).hasMessageContaining("line 1: expected the header");
    }

    @Test
    void aFileIsReadFromDiskAndAMissingOneIsRefused() throws IOException {
        Path file = Files.writeString(dir.resolve("t.csv"), "TIMESTAMP,ContextTokens,GeneratedTokens\n2023-11-16 18:15:46,10,5\n");
        assertThat(TraceReplay.load(file.toString()).rows()).hasSize(1);
        assertThatThrownBy(() -> TraceReplay.load(dir.resolve("absent.csv").toString())).hasMessageContaining("no such file");
    }

    @Test
    void theBundledConversationTraceIsComplete() {
        TraceReplay azure = TraceReplay.load(TraceReplay.AZURE_CONV);
        assertThat(azure.rows()).hasSize(19_366);
        assertThat(azure.spanMicros() / 60e6).isBetween(58.0, 58.5);
    }

    /** Each model replays its own slice, compressed into the run, keeping order and relative gaps. */
    @Test
    void slicesAreCompressedIntoTheRunKeepingTheirGaps() throws IOException {
        // six requests over 60 s: two models get 30 s each, compressed 3x into a 10 s run
        TraceReplay replay = parse("""
                TIMESTAMP,ContextTokens,GeneratedTokens
                2023-11-16 00:00:00,10,2
                2023-11-16 00:00:15,10,2
                2023-11-16 00:00:29,10,2
                2023-11-16 00:00:30,10,2
                2023-11-16 00:00:45,10,2
                2023-11-16 00:01:00,10,2
                """);
        TraceReplay.Plan plan = replay.plan(new OfferedLoad.Scale(MODELS.subList(0, 2), 2, WeightFormat.FP8, H200, Duration.ofSeconds(10),
                Duration.ofMillis(20), SimAttention.H200_BANDWIDTH_BYTES_PER_S), 0.9, 1);
        // tiny requests: rate scaling keeps every one
        assertThat(plan.requests()).extracting(TraceRequest::model, TraceRequest::arrivalMs).containsExactlyInAnyOrder(
                org.assertj.core.groups.Tuple.tuple(0, 0L), org.assertj.core.groups.Tuple.tuple(0, 5_000L),
                org.assertj.core.groups.Tuple.tuple(0, 9_667L), org.assertj.core.groups.Tuple.tuple(1, 0L),
                org.assertj.core.groups.Tuple.tuple(1, 5_000L), org.assertj.core.groups.Tuple.tuple(1, 9_999L));
        assertThat(plan.description()).contains("compressed 3.0x into 10 s").contains("100.00 % of the requests kept").contains("7b minutes 0.0-0.5 (3 of 3)");
    }

    @Test
    void theRecordedServiceIsThinnedToTheGpuTheSameWayForASeed() {
        TraceReplay azure = TraceReplay.load(TraceReplay.AZURE_CONV);
        OfferedLoad.Scale scale = new OfferedLoad.Scale(MODELS, 2, WeightFormat.FP8, H200, Duration.ofSeconds(20), Duration.ofMillis(20), SimAttention.H200_BANDWIDTH_BYTES_PER_S);
        TraceReplay.Plan plan = azure.plan(scale, 0.75, 42);
        assertThat(plan).isEqualTo(azure.plan(scale, 0.75, 42));
        assertThat(plan.requests()).isSortedAccordingTo((a, b) -> Long.compare(a.arrivalMs(), b.arrivalMs()))
                .allSatisfy(r -> assertThat(r.arrivalMs()).isBetween(0L, 19_999L));
        for (int m = 0; m < MODELS.size(); m++) {
            int model = m;
            long kept = plan.requests().stream().filter(r -> r.model() == model).count();
            // fewer than the slice's ~6,455 requests, but enough to keep its shape
            assertThat(kept).as("requests of %s", MODELS.get(m).name()).isBetween(50L, 6_000L);
        }
        assertThat(plan.description()).contains("19,366 requests over 58.4 min").contains("compressed 58.4x into 20 s");
        // one probability for the whole trace: all together offer the load asked, each slice as busy as it was
        OfferedLoad offered = OfferedLoad.of(scale, plan.requests());
        assertThat(offered.all()).isCloseTo(0.75, org.assertj.core.data.Offset.offset(0.05));
        double busiest = offered.perModel().stream().mapToDouble(Double::doubleValue).max().orElseThrow();
        double quietest = offered.perModel().stream().mapToDouble(Double::doubleValue).min().orElseThrow();
        assertThat(busiest / quietest).as("the slices differ: %s", offered.perModel()).isGreaterThan(1.4);
    }
}
