package io.kvpager.cache;

import io.kvpager.KvFormat;
import io.kvpager.Layout;
import io.kvpager.device.HandlePoolOptions;
import io.kvpager.sim.SimOptions;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import io.vertx.junit5.VertxExtension;
import io.vertx.junit5.VertxTestContext;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

@ExtendWith(VertxExtension.class)
class KvCacheOptionsTest {

    private static KvCacheOptions valid() {
        return new KvCacheOptions().setInstance("llama").setTp(4).setLayers(32).setBlockBytes(16 << 10).setPages(64);
    }

    @Test
    void defaultsAreTheDocumentedOnes() {
        KvCacheOptions o = valid().validate();
        assertThat(o.getPp()).isEqualTo(1);
        assertThat(o.getStages()).containsExactly(0);
        assertThat(o.getGroup()).isZero();
        assertThat(o.getKvBuffers()).isEqualTo(2);
        assertThat(o.getPageBytes()).isEqualTo(2L << 20);
        assertThat(o.getLayout()).isEqualTo(Layout.PAGE_MAJOR);
        assertThat(o.getKvDtype()).isEqualTo(KvFormat.BF16);
        assertThat(o.getSendTimeoutMs()).isEqualTo(60_000);
        assertThat(o.getTensorsDeadlineMs()).isEqualTo(30_000);
        assertThat(o.getTensorsPollMs()).isEqualTo(50);
        assertThat(o.isAdaptiveReserve()).isTrue();
        assertThat(o.getMemoryLimitBytes()).isNull();
        assertThat(o.getGpuMemoryPercent()).as("the workers' own default").isNull();
        assertThat(o.isLocalWorkers()).isFalse();
        assertThat(o.getDevice()).isEqualTo("sim");
        assertThat(o.geometry().blocksPerPage()).isEqualTo(128);
    }

    @Test
    void stagesDefaultToEveryStageAndAreExplicitWhenGiven() {
        assertThat(valid().setPp(3).getStages()).containsExactly(0, 1, 2);
        KvCacheOptions one = valid().setPp(3).setStages(List.of(2));
        assertThat(one.validate().getStages()).containsExactly(2);
        assertThat(one.toJson().getJsonArray("stages")).isEqualTo(new JsonArray().add(2));
        assertThat(valid().setPp(3).toJson().containsKey("stages")).isFalse();
    }

    @Test
    void jsonRoundTripKeepsEveryField() {
        KvCacheOptions o = valid().setPp(2).setStages(List.of(1)).setGroup(1007).setKvBuffers(1).setPageBytes(4L << 20)
                .setLayout(Layout.PER_LAYER).setKvDtype(KvFormat.FP8).setZeroPage(true).setSendTimeoutMs(500).setTensorsDeadlineMs(2_000)
                .setTensorsPollMs(5).setReserveLow(2).setReserveHigh(6).setAdaptiveReserve(false).setRefillIntervalMs(3)
                .setMemoryLimitBytes(1L << 30).setLazyStart(true).setLocalWorkers(true).setDevice("cuda")
                .setGpus(Map.of("pp1/tp3", 7)).setSim(SimOptions.defaults().withLatency(true))
                .setHandlePool(new HandlePoolOptions(1, 2)).setGpuMemoryPercent(85);
        KvCacheOptions back = new KvCacheOptions(o.toJson());
        assertThat(back.toJson()).isEqualTo(o.toJson());
        assertThat(back.gpuOf(1, 3)).isEqualTo(7);
        assertThat(back.gpuOf(1, 2)).isEqualTo(6);
        assertThat(new KvCacheOptions(o).toJson()).isEqualTo(o.toJson());
    }

    @ParameterizedTest
    @CsvSource(delimiter = '|', value = {
            "{\"tp\": 0}|tp must be >= 1, got 0",
            "{\"pp\": -1}|pp must be >= 1, got -1",
            "{\"group\": -2}|group must be >= 0, got -2",
            "{\"tp\": 1.5}|tp must be an integer, got 1.5",
            "{\"tp\": \"4\"}|tp must be an integer, got \"4\" (String)",
            "{\"instance\": \"a.b\"}|instance must be 1 to 64 letters",
            "{\"stages\": []}|stages must name at least one pp stage",
            "{\"stages\": [0, 0]}|stages lists stage 0 twice",
            "{\"stages\": [-1]}|stages must be pp stage numbers >= 0",
            "{\"layout\": \"ROWS\"}|layout must be PAGE_MAJOR or PER_LAYER, got 'ROWS'",
            "{\"kvDtype\": \"int4\"}|kvDtype must be one of [bf16, fp8] (fp8 is e4m3), got 'int4'",
            "{\"kvDtype\": 8}|kvDtype must be a string",
            "{\"sendTimeoutMs\": 0}|sendTimeoutMs must be >= 1, got 0",
            "{\"tensorsDeadlineMs\": 0}|tensorsDeadlineMs must be >= 1",
            "{\"reserveLow\": -1}|reserveLow must be >= 0",
            "{\"idleHandlePages\": -1}|idleHandlePages must be >= 0, got -1",
            "{\"idleHandlePages\": \"16\"}|idleHandlePages must be an integer, got \"16\" (String)",
            "{\"idleHandleMs\": 0}|idleHandleMs must be >= 1, got 0",
            "{\"gpuMemoryPercent\": 0}|gpuMemoryPercent must be in 1..100, got 0",
            "{\"gpuMemoryPercent\": 0.9}|gpuMemoryPercent must be an integer, got 0.9",
            "{\"memoryLimitBytes\": -5}|memoryLimitBytes must be >= 0",
            "{\"device\": \"tpu\"}|device must be 'sim' or 'cuda', got 'tpu'",
            "{\"gpus\": {\"rank0\": 1}}|gpus: 'rank0' is not a rank name",
            "{\"gpus\": {\"pp0/tp0\": -1}}|the GPU of pp0/tp0 must be an index >= 0",
            "{\"sim\": 3}|sim must be a JSON object, got 3",
            "{\"tpp\": 4}|unknown option 'tpp'; known options: instance, tp, pp",
            "{\"tp\": null}|tp must not be null",
            "{\"handlePool\": 4}|handlePool must be a JSON object, got 4 (Integer)",
            "{\"handlePool\": {\"bound\": 4}}|unknown handlePool option 'bound'; known handlePool options: prefillPages, boundPages",
            "{\"handlePool\": {\"boundPages\": -1}}|handlePool.boundPages must be >= 0, got -1",
            "{\"handlePool\": {\"boundPages\": 1.5}}|handlePool.boundPages must be an integer, got 1.5 (Double)",
            "{\"handlePool\": {\"prefillPages\": 1}}|handlePool.prefillPages needs handlePool.boundPages",
            "{\"handlePool\": {\"prefillPages\": 3, \"boundPages\": 2}}|handlePool.prefillPages (3) must not exceed handlePool.boundPages (2)",
    })
    void badValuesAreRejectedNamingTheField(String json, String message) {
        assertThatThrownBy(() -> new KvCacheOptions(new JsonObject(json)))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining(message);
    }

    @Test
    void theNestedOptionsAreTyped() {
        KvCacheOptions o = new KvCacheOptions(valid().toJson().put("handlePool", new JsonObject().put("boundPages", 3))
                .put("gpus", new JsonObject().put("pp0/tp1", 2)).put("sim", new JsonObject().put("gpuKey", "k").put("latency", true)));
        assertThat(o.getHandlePool()).isEqualTo(new HandlePoolOptions(0, 3));
        assertThat(o.getGpus()).isEqualTo(Map.of("pp0/tp1", 2));
        assertThat(o.getSim()).isEqualTo(SimOptions.defaults().withGpuKey("k").withLatency(true));
        assertThat(new KvCacheOptions(o.toJson()).toJson()).isEqualTo(o.toJson());
        assertThat(new KvCacheOptions(new JsonObject().put("handlePool", new JsonObject())).getHandlePool())
                .as("an empty handlePool is the workers' defaults").isNull();
        assertThatThrownBy(() -> new KvCacheOptions(new JsonObject().put("sim", new JsonObject().put("capacity", 1))))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("unknown sim option \"capacity\"");
        assertThatThrownBy(() -> new KvCacheOptions(new JsonObject().put("gpus", new JsonObject().put("pp0/tp0", "1"))))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("gpus: the GPU of pp0/tp0 must be an index >= 0");
        KvCacheOptions set = valid().setGpus(Map.of("pp0/tp1", 2));
        assertThatThrownBy(() -> set.setGpus(Map.of("pp0/tp1", -1))).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> set.setSim(null)).isInstanceOf(IllegalArgumentException.class);
        assertThat(set.getGpus()).as("a refused value changes nothing").isEqualTo(Map.of("pp0/tp1", 2));
        assertThatThrownBy(() -> valid().setHandlePool(new HandlePoolOptions(0, 65)).validate())
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("handlePool.boundPages (65) must not exceed pages (64)");
    }

    @ParameterizedTest
    @CsvSource(delimiter = '|', value = {
            "{\"tp\": 2}|instance is required",
            "{\"instance\": \"x\", \"blockBytes\": 4096, \"pages\": 4}|layers is required",
            "{\"instance\": \"x\", \"layers\": 1, \"pages\": 4}|blockBytes is required",
            "{\"instance\": \"x\", \"layers\": 1, \"blockBytes\": 4096}|pages is required",
            "{\"instance\": \"x\", \"layers\": 1, \"blockBytes\": 4096, \"pages\": 4, \"pp\": 2, \"stages\": [2]}|stages: stage 2 is outside 0..1 for pp=2",
            "{\"instance\": \"x\", \"layers\": 1, \"blockBytes\": 4194304, \"pages\": 4}|does not fit in a page of 2097152 bytes",
            "{\"instance\": \"x\", \"layers\": 1, \"blockBytes\": 4096, \"pages\": 4, \"reserveLow\": 3, \"reserveHigh\": 2}|reserveLow (3) must not exceed reserveHigh (2)",
            "{\"instance\": \"x\", \"layers\": 1, \"blockBytes\": 4096, \"pages\": 4, \"reserveHigh\": 5}|reserveHigh (5) must not exceed pages (4)",
            "{\"instance\": \"x\", \"layers\": 1, \"blockBytes\": 4096, \"pages\": 4, \"tensorsPollMs\": 10, \"tensorsDeadlineMs\": 5}|tensorsPollMs (10) must not exceed tensorsDeadlineMs (5)",
            "{\"instance\": \"x\", \"layers\": 1, \"blockBytes\": 4096, \"pages\": 4, \"tp\": 2, \"gpus\": {\"pp0/tp2\": 1}}|gpus: rank pp0/tp2 is not a rank of this pool",
    })
    void validateChecksFieldsTogether(String json, String message) {
        KvCacheOptions options = new KvCacheOptions(new JsonObject(json));
        assertThatThrownBy(options::validate).isInstanceOf(IllegalArgumentException.class).hasMessageContaining(message);
    }

    @Test
    void deployRejectsInvalidOptionsWithTheReason(Vertx vertx, VertxTestContext test) {
        KvCache.deploy(vertx, valid().setReserveHigh(100)).onComplete(test.failing(e -> test.verify(() -> {
            assertThat(e).isInstanceOf(IllegalArgumentException.class).hasMessageContaining("reserveHigh (100)");
            test.completeNow();
        })));
    }

    @Test
    void theDefaultConfigFileLoadsAndValidates(Vertx vertx, VertxTestContext test) {
        KvCacheOptions.load(vertx, Path.of("..", "config", "kvpager.json").toString())
                .onComplete(test.succeeding(o -> test.verify(() -> {
                    o.validate();
                    assertThat(o.getInstance()).isEqualTo("model-0");
                    assertThat(o.getLayout()).isEqualTo(Layout.PAGE_MAJOR);
                    assertThat(o.geometry().blocksPerPage()).isEqualTo(32);
                    test.completeNow();
                })));
    }

    @Test
    void loadReadsTheFileAndLetsSystemPropertiesOverrideIt(Vertx vertx, VertxTestContext test, @TempDir Path dir) throws IOException {
        Path file = dir.resolve("kvpager.json");
        Files.writeString(file, new JsonObject().put("instance", "from-file").put("tp", 2).put("layers", 4)
                .put("blockBytes", 4096).put("pages", 32).put("sim", new JsonObject().put("capacityBytes", 1L << 30))
                .encodePrettily());
        System.setProperty("kvpager.tp", "8");
        System.setProperty("kvpager.stages", "0,1");
        System.setProperty("kvpager.pp", "2");
        System.setProperty("kvpager.sim.latency", "true");
        KvCacheOptions.load(vertx, file.toString()).eventually(() -> {
            clearProperties("tp", "stages", "pp", "sim.latency");
            return Future.succeededFuture();
        }).onComplete(test.succeeding(o -> test.verify(() -> {
            assertThat(o.getInstance()).isEqualTo("from-file");
            assertThat(o.getTp()).isEqualTo(8);
            assertThat(o.getPp()).isEqualTo(2);
            assertThat(o.getStages()).containsExactly(0, 1);
            assertThat(o.getLayers()).isEqualTo(4);
            assertThat(o.getSim()).isEqualTo(SimOptions.defaults().withCapacityBytes(1L << 30).withLatency(true));
            test.completeNow();
        })));
    }

    @Test
    void loadRejectsAnUnknownKeyInTheFile(Vertx vertx, VertxTestContext test, @TempDir Path dir) throws IOException {
        Path file = dir.resolve("kvpager.json");
        Files.writeString(file, "{\"instance\": \"x\", \"layers\": 1, \"blockBytes\": 4096, \"pages\": 4, \"reserveHihg\": 2}");
        KvCacheOptions.load(vertx, file.toString()).onComplete(test.failing(e -> test.verify(() -> {
            assertThat(e).isInstanceOf(IllegalArgumentException.class).hasMessageContaining("unknown option 'reserveHihg'");
            test.completeNow();
        })));
    }

    @Test
    void loadRejectsABadSystemPropertyNamingIt(Vertx vertx, VertxTestContext test, @TempDir Path dir) throws IOException {
        Path file = dir.resolve("kvpager.json");
        Files.writeString(file, "{\"instance\": \"x\", \"layers\": 1, \"blockBytes\": 4096, \"pages\": 4}");
        System.setProperty("kvpager.sendTimeoutMs", "soon");
        KvCacheOptions.load(vertx, file.toString()).eventually(() -> {
            clearProperties("sendTimeoutMs");
            return Future.succeededFuture();
        }).onComplete(test.failing(e -> test.verify(() -> {
            assertThat(e).isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining("kvpager.sendTimeoutMs (option sendTimeoutMs): 'soon' is not an integer");
            test.completeNow();
        })));
    }

    @Test
    void loadValidatesTheResult(Vertx vertx, VertxTestContext test, @TempDir Path dir) throws IOException {
        Path file = dir.resolve("kvpager.json");
        Files.writeString(file, "{\"instance\": \"x\", \"layers\": 1, \"blockBytes\": 4096, \"pages\": 4, \"reserveHigh\": 9}");
        KvCacheOptions.load(vertx, file.toString()).onComplete(test.failing(e -> test.verify(() -> {
            assertThat(e).hasMessageContaining("reserveHigh (9) must not exceed pages (4)");
            test.completeNow();
        })));
    }

    @Test
    void loadFailsForAMissingFileNamingIt(Vertx vertx, VertxTestContext test, @TempDir Path dir) {
        String missing = dir.resolve("nope.json").toString();
        KvCacheOptions.load(vertx, missing).onComplete(test.failing(e -> test.verify(() -> {
            assertThat(e).isInstanceOf(IllegalArgumentException.class).hasMessageContaining("cannot read kvpager options from " + missing);
            test.completeNow();
        })));
    }

    private static void clearProperties(String... keys) {
        for (String key : keys) {
            System.clearProperty("kvpager." + key);
        }
    }
}
