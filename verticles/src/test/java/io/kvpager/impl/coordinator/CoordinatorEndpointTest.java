package io.kvpager.impl.coordinator;

import io.kvpager.cache.KvCache;
import io.kvpager.cache.SimPool;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.eventbus.DeliveryOptions;
import io.vertx.core.eventbus.Message;
import io.vertx.core.eventbus.ReplyException;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import io.vertx.junit5.VertxExtension;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import static io.kvpager.cache.SimPool.await;
import static io.kvpager.cache.SimPool.failure;
import static org.assertj.core.api.Assertions.assertThat;

/** Remote control of a cache through its coordinator's address. */
@ExtendWith(VertxExtension.class)
class CoordinatorEndpointTest {

    private static Future<JsonObject> ask(Vertx vertx, String name, String action, Object body) {
        DeliveryOptions options = new DeliveryOptions();
        if (action != null) {
            options.addHeader("action", action);
        }
        return vertx.eventBus().<JsonObject>request("kvpager." + name + ".coordinator", body, options).map(Message::body);
    }

    @Test
    void allocFreeFenceLimitTrimAndStatsOverTheBus(Vertx vertx) {
        String name = "ep-ok";
        KvCache cache = await(KvCache.deploy(vertx, SimPool.options(name)));
        JsonObject alloc = await(ask(vertx, name, "alloc", new JsonObject().put("blocks", 3)));
        assertThat(alloc.getJsonArray("blocks")).containsExactly(0, 1, 2);
        JsonObject other = await(ask(vertx, name, "alloc", new JsonObject().put("blocks", SimPool.BLOCKS_PER_PAGE)));
        assertThat(other.getJsonArray("blocks").getInteger(0)).isEqualTo(SimPool.BLOCKS_PER_PAGE); // a page of its own
        await(ask(vertx, name, "free", new JsonObject().put("blocks", other.getJsonArray("blocks"))));
        JsonObject near = await(ask(vertx, name, "alloc", new JsonObject().put("blocks", 2).put("near", 2)));
        assertThat(near.getJsonArray("blocks")).containsExactly(3, 4);
        await(ask(vertx, name, "free", new JsonObject().put("blocks", near.getJsonArray("blocks"))));
        JsonObject fence = await(ask(vertx, name, "fence", new JsonObject()));
        assertThat(fence.getLong("fence")).isPositive();
        assertThat(await(ask(vertx, name, "free", new JsonObject().put("blocks", alloc.getJsonArray("blocks"))))).isEmpty();
        assertThat(await(ask(vertx, name, "retired", new JsonObject().put("fence", fence.getLong("fence"))))).isEmpty();
        assertThat(await(ask(vertx, name, "available", null)).getInteger("blocks")).isEqualTo(SimPool.PAGES * SimPool.BLOCKS_PER_PAGE);
        JsonObject limit = await(ask(vertx, name, "limit", new JsonObject().put("bytes", 0).put("revision", 1)));
        assertThat(limit.getString("outcome")).isEqualTo("APPLIED");
        JsonObject miss = await(ask(vertx, name, "alloc", new JsonObject().put("blocks", 1)));
        assertThat(miss.getString("miss")).isEqualTo("LIMIT");
        assertThat(miss.getString("detail")).contains("limit");
        assertThat(await(ask(vertx, name, "trim", new JsonObject()))).isEmpty();
        assertThat(await(ask(vertx, name, "pool", new JsonObject()))).isEqualTo(new JsonObject().put("instance", name)
                .put("stages", new JsonArray().add(0)).put("tp", 4).put("group", 0));
        JsonObject stats = await(ask(vertx, name, "stats", new JsonObject()));
        assertThat(stats.getString("instance")).isEqualTo(name);
        assertThat(stats.getJsonObject("pool").getInteger("limitPages")).isZero();
        assertThat(stats.getJsonArray("ranks")).hasSize(4);
        await(cache.close());
    }

    @ParameterizedTest
    @CsvSource(delimiter = '|', value = {
            "alloc|{\"blocks\": \"3\"}|blocks must be an integer, got \"3\" (String)",
            "alloc|{}|blocks is required",
            "alloc|{\"blocks\": 0}|cannot allocate 0 blocks",
            "alloc|{\"blocks\": 1, \"near\": \"2\"}|near must be an integer, got \"2\" (String)",
            "alloc|{\"blocks\": 1, \"near\": 5}|cannot allocate near block 5: it is not allocated",
            "free|{\"blocks\": 5}|blocks must be an array of integers, got 5 (Integer)",
            "free|{\"blocks\": [1, \"x\"]}|blocks[1] must be an integer, got \"x\" (String)",
            "free|{\"blocks\": [7]}|7",
            "retired|{\"fence\": 9}|fence 9 was never opened",
            "limit|{\"bytes\": 1, \"revision\": null}|revision must be an integer, got null",
            "limit|{\"bytes\": 1, \"revision\": \"7\"}|revision must be an integer, got \"7\" (String)",
            "limit|{\"bytes\": 1, \"revision\": 9223372036854775807}|a limit revision is at most 4611686018427387904",
            "limit|{\"bytes\": 1, \"revision\": -3}|revision cannot be negative",
            "limit|{\"bytes\": -1}|negative",
            "limit|{\"bytes\": -1, \"revision\": 4}|negative",
            "launch|{}|unknown action 'launch'; actions: pool, stats, alloc, free",
            "|{}|the 'action' header is missing; actions: pool, stats",
    })
    void badRequestsFailWith400NamingTheField(String action, String body, String message, Vertx vertx) {
        String name = "ep-bad";
        KvCache cache = await(KvCache.deploy(vertx, SimPool.options(name)));
        Throwable e = failure(ask(vertx, name, action, new JsonObject(body)));
        assertThat(e).isInstanceOf(ReplyException.class).hasMessageContaining(message);
        assertThat(((ReplyException) e).failureCode()).isEqualTo(400);
        await(cache.close());
    }

    @Test
    void aSecondCacheOfTheSameInstanceIsRefused(Vertx vertx) {
        String name = "ep-twice";
        KvCache cache = await(KvCache.deploy(vertx, SimPool.options(name)));
        int deployments = vertx.deploymentIDs().size();
        Throwable e = failure(KvCache.deploy(vertx, SimPool.options(name).setGroup(2)));
        assertThat(vertx.deploymentIDs()).hasSize(deployments);
        assertThat(e).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("instance ep-twice already has a coordinator at kvpager.ep-twice.coordinator serving")
                .hasMessageContaining("\"group\":0");
        assertThat(await(cache.alloc(1)).isMiss()).isFalse();
        await(cache.close());
    }

    @Test
    void aBodyThatIsNotJsonIsABadRequest(Vertx vertx) {
        String name = "ep-text";
        KvCache cache = await(KvCache.deploy(vertx, SimPool.options(name)));
        Throwable e = failure(ask(vertx, name, "alloc", "three"));
        assertThat(((ReplyException) e).failureCode()).isEqualTo(400);
        assertThat(e).hasMessageContaining("the body must be a JSON object");
        assertThat(failure(ask(vertx, name, "free", new JsonArray()))).hasMessageContaining("JSON object");
        await(cache.close());
    }
}
