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
        SealedMap<String> books = SealedMap.ofText("sealed-roundtrip", raw, KEY, false);
        await(books.put("gpu-a", "{\"p\":1}"));
        assertThat(await(books.get("gpu-a"))).isEqualTo("{\"p\":1}");
        assertThat(await(raw.get("gpu-a"))).endsWith(":1:{\"p\":1}").isEqualTo(books.seal("gpu-a", 1, "{\"p\":1}"));
        assertThat(await(books.replaceIfPresent("gpu-a", "{\"p\":1}", "{\"p\":2}"))).isTrue();
        assertThat(await(books.replaceIfPresent("gpu-a", "{\"p\":1}", "{\"p\":3}"))).as("a compare-and-set against a stale value").isFalse();
        assertThat(await(books.get("gpu-a"))).isEqualTo("{\"p\":2}");
        assertThat(await(books.removeIfPresent("gpu-a", "{\"p\":2}"))).isTrue();
        assertThat(await(books.get("gpu-a"))).isNull();
    }

    @Test
    void aRecordWithoutTheMacIsIgnoredAndAWriterReplacesIt(Vertx vertx) {
        AsyncMap<String, String> raw = raw(vertx, "sealed-forged");
        SealedMap<String> books = SealedMap.ofText("sealed-forged", raw, KEY, true);
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
        SealedMap<String> books = SealedMap.ofText("sealed-over", raw, KEY, true);
        await(books.put("gpu-a", "{\"p\":5}"));
        await(raw.put("gpu-a", "{\"stranger\":1125899906842624}"));
        assertThat(await(books.get("gpu-a"))).as("the last record with a good MAC").isEqualTo("{\"p\":5}");
        assertThat(await(books.putIfAbsent("gpu-a", "{\"p\":9}"))).isEqualTo("{\"p\":5}");
        // the compare-and-set against the proven value is made against the forged record it stands for
        assertThat(await(books.replaceIfPresent("gpu-a", "{\"p\":5}", "{\"p\":6}"))).isTrue();
        assertThat(await(raw.get("gpu-a"))).isEqualTo(books.seal("gpu-a", 2, "{\"p\":6}"));
        assertThat(await(books.replaceIfPresent("gpu-a", "{\"p\":5}", "{\"p\":7}"))).isFalse();
        assertThat(await(books.get("gpu-a"))).isEqualTo("{\"p\":6}");
    }

    @Test
    void aRecordMovedToAnotherKeyOrMapOrSealedUnderAnotherSecretDoesNotCheck(Vertx vertx) {
        AsyncMap<String, String> raw = raw(vertx, "sealed-moved");
        SealedMap<String> books = SealedMap.ofText("sealed-moved", raw, KEY, true);
        SealedMap<String> otherMap = SealedMap.ofText("sealed-elsewhere", raw(vertx, "sealed-elsewhere"), KEY, true);
        SealedMap<String> otherSecret = SealedMap.ofText("sealed-moved", raw, OTHER_KEY, true);
        await(raw.put("gpu-b", books.seal("gpu-a", 1, "{\"p\":1}")));
        await(raw.put("gpu-c", otherMap.seal("gpu-c", 1, "{\"p\":1}")));
        await(raw.put("gpu-d", otherSecret.seal("gpu-d", 1, "{\"p\":1}")));
        // the version is under the MAC too: a record renumbered to look newer does not check
        String sealed = books.seal("gpu-e", 1, "{\"p\":1}");
        await(raw.put("gpu-e", sealed.replace(":1:", ":9:")));
        assertThat(await(books.get("gpu-e"))).isNull();
        assertThat(await(books.get("gpu-b"))).isNull();
        assertThat(await(books.get("gpu-c"))).isNull();
        assertThat(await(books.get("gpu-d"))).isNull();
        assertThat(await(books.values())).isEmpty();
    }

    @Test
    void numbersAreSealedAsText(Vertx vertx) {
        AsyncMap<String, String> raw = raw(vertx, "sealed-numbers");
        SealedMap<Long> capacities = new SealedMap<>("sealed-numbers", raw, KEY, String::valueOf, Long::parseLong, true,
                new java.util.concurrent.ConcurrentHashMap<>(), java.util.concurrent.ConcurrentHashMap.newKeySet());
        await(raw.put("gpu-a", "1"));
        assertThat(await(capacities.putIfAbsent("gpu-a", 1L << 30))).as("a forged capacity stands for none").isNull();
        assertThat(await(capacities.putIfAbsent("gpu-a", 5L))).isEqualTo(1L << 30);
        assertThat(await(capacities.get("gpu-a"))).isEqualTo(1L << 30);
    }

    @Test
    void anOlderRecordPutBackIsIgnoredByEveryNodeThatProvedANewerOneAndTheNextWriteReplacesIt(Vertx vertx) {
        AsyncMap<String, String> raw = raw(vertx, "sealed-replay");
        SealedMap<String> here = SealedMap.ofText("sealed-replay", raw, KEY, true);
        SealedMap<String> there = SealedMap.ofText("sealed-replay", raw, KEY, true);
        assertThat(await(here.putIfAbsent("gpu-a", "{\"a\":0}"))).isNull();
        String copied = await(raw.get("gpu-a"));
        assertThat(await(there.replaceIfPresent("gpu-a", "{\"a\":0}", "{\"a\":0,\"b\":64}"))).isTrue();
        assertThat(await(here.get("gpu-a"))).isEqualTo("{\"a\":0,\"b\":64}");

        // a member puts back the first record, sealed and all: it would hide b's 64 bytes
        await(raw.put("gpu-a", copied));
        assertThat(await(here.get("gpu-a"))).as("the newest record proved here").isEqualTo("{\"a\":0,\"b\":64}");
        assertThat(await(there.get("gpu-a"))).isEqualTo("{\"a\":0,\"b\":64}");
        assertThat(await(here.entries())).isEqualTo(Map.of("gpu-a", "{\"a\":0,\"b\":64}"));
        assertThat(await(here.replaceIfPresent("gpu-a", "{\"a\":0}", "{\"a\":32}"))).as("a set against the replayed value").isFalse();
        assertThat(await(raw.get("gpu-a"))).isEqualTo(copied);

        // the next write replaces the replayed record under the version after the newest
        assertThat(await(here.replaceIfPresent("gpu-a", "{\"a\":0,\"b\":64}", "{\"a\":32,\"b\":64}"))).isTrue();
        assertThat(await(raw.get("gpu-a"))).isEqualTo(here.seal("gpu-a", 3, "{\"a\":32,\"b\":64}"));
        assertThat(await(there.get("gpu-a"))).isEqualTo("{\"a\":32,\"b\":64}");
    }

    @Test
    void aKeptRecordDeletedReadsAsTheProvenOneUntilTheNextWritePutsItBack(Vertx vertx) {
        AsyncMap<String, String> raw = raw(vertx, "sealed-deleted");
        SealedMap<String> books = SealedMap.ofText("sealed-deleted", raw, KEY, true);
        assertThat(await(books.putIfAbsent("gpu-a", "{\"a\":64}"))).isNull();
        await(raw.remove("gpu-a"));
        assertThat(await(books.get("gpu-a"))).as("a deleted record of a kept map").isEqualTo("{\"a\":64}");
        assertThat(await(books.keys())).containsExactly("gpu-a");
        assertThat(await(books.putIfAbsent("gpu-a", "{\"b\":64}"))).as("the caller decides again on the proven record")
                .isEqualTo("{\"a\":64}");
        assertThat(await(raw.get("gpu-a"))).isNull();
        assertThat(await(books.replaceIfPresent("gpu-a", "{\"a\":64}", "{\"a\":64,\"b\":64}"))).isTrue();
        assertThat(await(raw.get("gpu-a"))).isEqualTo(books.seal("gpu-a", 2, "{\"a\":64,\"b\":64}"));
    }

    @Test
    void aRecordRemovedFromAMapThatRemovesRecordsIsGone(Vertx vertx) {
        AsyncMap<String, String> raw = raw(vertx, "sealed-removable");
        SealedMap<String> here = SealedMap.ofText("sealed-removable", raw, KEY, false);
        SealedMap<String> there = SealedMap.ofText("sealed-removable", raw, KEY, false);
        await(here.put("llama", "node-1"));
        assertThat(await(there.get("llama"))).isEqualTo("node-1");
        assertThat(await(here.removeIfPresent("llama", "node-1"))).isTrue();
        assertThat(await(there.get("llama"))).as("removed by its owner, as a directory entry is").isNull();
        assertThat(await(there.putIfAbsent("llama", "node-2"))).isNull();
        assertThat(await(raw.get("llama"))).isEqualTo(there.seal("llama", 2, "node-2"));
        // removed again, and registered by a node that never read it: versions start again, and a reader
        // that proved version 2 takes version 1
        assertThat(await(here.get("llama"))).isEqualTo("node-2");
        assertThat(await(there.removeIfPresent("llama", "node-2"))).isTrue();
        SealedMap<String> fresh = SealedMap.ofText("sealed-removable", raw, KEY, false);
        assertThat(await(fresh.putIfAbsent("llama", "node-3"))).isNull();
        assertThat(await(raw.get("llama"))).isEqualTo(fresh.seal("llama", 1, "node-3"));
        assertThat(await(here.get("llama"))).isEqualTo("node-3");
    }

    @Test
    void aNodeThatNeverReadAKeyCannotTellAReplayedRecordFromTheNewest(Vertx vertx) {
        // the limit of versions, as documented: only a node that proved a newer record sees the replay
        AsyncMap<String, String> raw = raw(vertx, "sealed-fresh");
        SealedMap<String> writer = SealedMap.ofText("sealed-fresh", raw, KEY, true);
        await(writer.put("gpu-a", "{\"a\":1}"));
        String copied = await(raw.get("gpu-a"));
        await(writer.put("gpu-a", "{\"a\":2}"));
        await(raw.put("gpu-a", copied));
        SealedMap<String> fresh = SealedMap.ofText("sealed-fresh", raw, KEY, true);
        assertThat(await(fresh.get("gpu-a"))).isEqualTo("{\"a\":1}");
        assertThat(await(writer.get("gpu-a"))).isEqualTo("{\"a\":2}");
    }
}
