package io.kvpager.internal.options;

import io.kvpager.cache.KvCacheOptions;
import io.kvpager.protocol.RequestBody;
import io.kvpager.worker.RankWorkerOptions;
import io.vertx.core.json.JsonObject;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;
import org.junit.jupiter.api.Test;

import java.util.Map;
import java.util.function.Function;
import java.util.stream.Stream;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.catchThrowable;
import static org.junit.jupiter.params.provider.Arguments.arguments;

/**
 * Every source of options refuses the same bad value with the same words, and a refused value
 * changes nothing: a worker never accepts a name its coordinator refuses.
 */
class OneRuleSetTest {

    private static final String LONGEST = "n".repeat(64);

    private static JsonObject cache() {
        return new JsonObject().put("instance", "m").put("tp", 1).put("layers", 1).put("blockBytes", 4096).put("pages", 4);
    }

    private static JsonObject worker() {
        return new JsonObject().put("instance", "m").put("pp", 0).put("tp", 0);
    }

    /** Each source reading {@code key: value} on top of its valid options, validated. */
    private static Stream<Function<Object[], Object>> sources() {
        return Stream.of(
                kv -> new KvCacheOptions(cache().put((String) kv[0], kv[1])).validate(),
                kv -> new RankWorkerOptions(worker().put((String) kv[0], kv[1])).validate());
    }

    static Stream<Arguments> refusedEverywhere() {
        String name = "must be 1 to 64 letters, digits, '-' or '_' (it is part of event-bus addresses), got ";
        return Stream.of(
                arguments("instance", "a.b", "instance " + name + "'a.b'"),
                arguments("instance", "", "instance " + name + "''"),
                arguments("instance", "a/b", "instance " + name + "'a/b'"),
                arguments("instance", LONGEST + "n", "instance " + name + "'" + LONGEST + "n'"),
                arguments("instance", 7, "instance must be a string, got 7 (Integer)"),
                arguments("device", "tpu", "device must be 'sim' or 'cuda', got 'tpu'"),
                arguments("device", "CUDA", "device must be 'sim' or 'cuda', got 'CUDA'"),
                arguments("tp", "4", "tp must be an integer, got \"4\" (String)"),
                arguments("tp", 1.5, "tp must be an integer, got 1.5 (Double)"),
                arguments("tp", 1L << 40, "tp must be an integer in the int range, got 1099511627776 (Long)"),
                arguments("sim", 3, "sim must be a JSON object, got 3 (Integer)"),
                arguments("sendTimeoutMs", 0, "sendTimeoutMs must be >= 1, got 0"),
                arguments("sendTimeoutMs", true, "sendTimeoutMs must be an integer, got true (Boolean)"));
    }

    @ParameterizedTest
    @MethodSource("refusedEverywhere")
    void everySourceRefusesTheSameValueInTheSameWords(String key, Object value, String message) {
        sources().forEach(source -> assertThatThrownBy(() -> source.apply(new Object[] {key, value}))
                .isInstanceOf(IllegalArgumentException.class).hasMessage(message));
    }

    @Test
    void everySourceTakesTheSameNames() {
        for (String name : new String[] {LONGEST, "a", "llama-70b_A9"}) {
            sources().forEach(source -> assertThat(catchThrowable(() -> source.apply(new Object[] {"instance", name}))).isNull());
        }
    }

    @Test
    void requestBodiesReadIntegersAndRangesByTheSameRules() {
        RequestBody body = new RequestBody(new JsonObject().put("tp", "4").put("pp", 1.5).put("gpu", -2));
        String tp = catchThrowable(() -> new RankWorkerOptions(worker().put("tp", "4"))).getMessage();
        assertThatThrownBy(() -> body.requireInt("tp", 0, 7)).hasMessage(tp);
        assertThatThrownBy(() -> body.requireInt("pp", 0, 7)).hasMessage("pp must be an integer, got 1.5 (Double)");
        assertThatThrownBy(() -> body.requireInt("gpu", 0, 7)).hasMessage("gpu must be in 0..7, got -2");
        assertThatThrownBy(() -> body.requireInt("layers", 0, 7)).hasMessage("layers is required");
    }

    @Test
    void aRefusedValueChangesNothing() {
        KvCacheOptions cache = new KvCacheOptions(cache());
        RankWorkerOptions worker = new RankWorkerOptions(worker());
        JsonObject cacheBefore = cache.toJson();
        JsonObject workerBefore = worker.toJson();
        assertThatThrownBy(() -> cache.setInstance("a.b")).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> worker.setInstance("a.b")).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> cache.setDevice("tpu")).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> worker.setDevice("tpu")).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> cache.setGpus(Map.of("pp0/tp0", 1, "rank1", 2))).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> cache.setGpus(Map.of("pp0/tp0", -1))).isInstanceOf(IllegalArgumentException.class);
        assertThat(cache.toJson()).isEqualTo(cacheBefore);
        assertThat(worker.toJson()).isEqualTo(workerBefore);
    }
}
