package io.kvpager.internal.books;

import io.vertx.core.Vertx;
import io.vertx.core.shareddata.AsyncMap;
import io.vertx.junit5.VertxExtension;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import java.nio.charset.StandardCharsets;
import java.util.Map;

import static io.kvpager.cache.SimPool.await;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * Records sealed with the cluster's MAC, over the process's own shared data: what a member without
 * the secret writes (a record of its own, one moved from another key or map, one sealed under
 * another secret) is never read as a value, and a writer replaces it.
 */
@ExtendWith(VertxExtension.class)
class SealedMapTest {

    private static final byte[] KEY = "a book key of 32 bytes for tests".getBytes(StandardCharsets.UTF_8);
    private static final byte[] OTHER_KEY = "another key, not the cluster's!!".getBytes(StandardCharsets.UTF_8);

    private static AsyncMap<String, String> raw(Vertx vertx, String name) {
        return await(vertx.sharedData().<String, String>getAsyncMap(name));
    }

    @Test
    void aSealedRecordReadsBackAndItsStoredTextCarriesTheMac(Vertx vertx) {
        AsyncMap<String, String> raw = raw(vertx, "sealed-roundtrip");
        SealedMap<String> books = SealedMap.ofText("sealed-roundtrip", raw, KEY);
        await(books.put("gpu-a", "{\"p\":1}"));
        assertThat(await(books.get("gpu-a"))).isEqualTo("{\"p\":1}");
        assertThat(await(raw.get("gpu-a"))).endsWith(":{\"p\":1}").isEqualTo(books.seal("gpu-a", "{\"p\":1}"));
        assertThat(await(books.replaceIfPresent("gpu-a", "{\"p\":1}", "{\"p\":2}"))).isTrue();
        assertThat(await(books.replaceIfPresent("gpu-a", "{\"p\":1}", "{\"p\":3}"))).as("a compare-and-set against a stale value").isFalse();
        assertThat(await(books.get("gpu-a"))).isEqualTo("{\"p\":2}");
        assertThat(await(books.removeIfPresent("gpu-a", "{\"p\":2}"))).isTrue();
        assertThat(await(books.get("gpu-a"))).isNull();
    }

    @Test
    void aRecordWithoutTheMacIsIgnoredAndAWriterReplacesIt(Vertx vertx) {
        AsyncMap<String, String> raw = raw(vertx, "sealed-forged");
        SealedMap<String> books = SealedMap.ofText("sealed-forged", raw, KEY);
        await(raw.put("gpu-a", "{\"stranger\":1125899906842624}"));
        await(raw.put("gpu-b", "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA:{\"stranger\":1}"));
        assertThat(await(books.get("gpu-a"))).isNull();
        assertThat(await(books.get("gpu-b"))).isNull();
        assertThat(await(books.keys())).isEmpty();
        assertThat(await(books.removeIfPresent("gpu-a", "{\"stranger\":1125899906842624}"))).isFalse();

        // a bad record stands for none: putIfAbsent replaces it
        assertThat(await(books.putIfAbsent("gpu-a", "{\"p\":1}"))).isNull();
        assertThat(await(books.get("gpu-a"))).isEqualTo("{\"p\":1}");
        assertThat(await(books.entries())).isEqualTo(Map.of("gpu-a", "{\"p\":1}"));
    }

    @Test
    void aForgedRecordOverAProvenOneReadsAsTheProvenOneUntilAWriterReplacesIt(Vertx vertx) {
        AsyncMap<String, String> raw = raw(vertx, "sealed-over");
        SealedMap<String> books = SealedMap.ofText("sealed-over", raw, KEY);
        await(books.put("gpu-a", "{\"p\":5}"));
        await(raw.put("gpu-a", "{\"stranger\":1125899906842624}"));
        assertThat(await(books.get("gpu-a"))).as("the last record with a good MAC").isEqualTo("{\"p\":5}");
        assertThat(await(books.putIfAbsent("gpu-a", "{\"p\":9}"))).isEqualTo("{\"p\":5}");
        // the compare-and-set against the proven value is made against the forged record it stands for
        assertThat(await(books.replaceIfPresent("gpu-a", "{\"p\":5}", "{\"p\":6}"))).isTrue();
        assertThat(await(raw.get("gpu-a"))).isEqualTo(books.seal("gpu-a", "{\"p\":6}"));
        assertThat(await(books.replaceIfPresent("gpu-a", "{\"p\":5}", "{\"p\":7}"))).isFalse();
        assertThat(await(books.get("gpu-a"))).isEqualTo("{\"p\":6}");
    }

    @Test
    void aRecordMovedToAnotherKeyOrMapOrSealedUnderAnotherSecretDoesNotCheck(Vertx vertx) {
        AsyncMap<String, String> raw = raw(vertx, "sealed-moved");
        SealedMap<String> books = SealedMap.ofText("sealed-moved", raw, KEY);
        SealedMap<String> otherMap = SealedMap.ofText("sealed-elsewhere", raw(vertx, "sealed-elsewhere"), KEY);
        SealedMap<String> otherSecret = SealedMap.ofText("sealed-moved", raw, OTHER_KEY);
        await(raw.put("gpu-b", books.seal("gpu-a", "{\"p\":1}")));
        await(raw.put("gpu-c", otherMap.seal("gpu-c", "{\"p\":1}")));
        await(raw.put("gpu-d", otherSecret.seal("gpu-d", "{\"p\":1}")));
        assertThat(await(books.get("gpu-b"))).isNull();
        assertThat(await(books.get("gpu-c"))).isNull();
        assertThat(await(books.get("gpu-d"))).isNull();
        assertThat(await(books.values())).isEmpty();
    }

    @Test
    void numbersAreSealedAsText(Vertx vertx) {
        AsyncMap<String, String> raw = raw(vertx, "sealed-numbers");
        SealedMap<Long> capacities = new SealedMap<>("sealed-numbers", raw, KEY, String::valueOf, Long::parseLong,
                new java.util.concurrent.ConcurrentHashMap<>(), java.util.concurrent.ConcurrentHashMap.newKeySet());
        await(raw.put("gpu-a", "1"));
        assertThat(await(capacities.putIfAbsent("gpu-a", 1L << 30))).as("a forged capacity stands for none").isNull();
        assertThat(await(capacities.putIfAbsent("gpu-a", 5L))).isEqualTo(1L << 30);
        assertThat(await(capacities.get("gpu-a"))).isEqualTo(1L << 30);
    }
}
