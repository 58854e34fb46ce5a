package io.kvpager.impl.coordinator;

import io.kvpager.Allocation;
import io.kvpager.FailureCode;
import io.kvpager.cache.KvCache;
import io.kvpager.cache.KvCacheOptions;
import io.kvpager.cache.KvPagerException;
import io.kvpager.cache.SimPool;
import io.kvpager.protocol.CreateTensorsRequest;
import io.kvpager.protocol.Owner;
import io.kvpager.protocol.WorkerProtocol;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.Vertx;
import io.vertx.core.eventbus.DeliveryOptions;
import io.vertx.core.eventbus.ReplyException;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import io.vertx.junit5.VertxExtension;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import java.time.Duration;
import java.util.function.Supplier;

import static io.kvpager.cache.SimPool.await;
import static io.kvpager.cache.SimPool.failure;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * Block ids are positions in the pool's tensors, so a coordinator that comes back as a new owner
 * incarnation hands out the very ids the owner before it had handed out. A free of the old ids
 * that names the old owner (as the alloc answered it) is refused with {@code DISPLACED} and frees
 * nothing: the blocks the new owner gave to someone else stay theirs.
 */
@ExtendWith(VertxExtension.class)
class StaleBlocksTest {

    private static <T> Future<T> onContext(CoordinatorVerticle verticle, Supplier<Future<T>> work) {
        Promise<T> promise = Promise.promise();
        verticle.context().runOnContext(v -> work.get().onComplete(promise));
        return promise.future();
    }

    private static Future<JsonObject> toCoordinator(Vertx vertx, String name, String action, JsonObject body) {
        return vertx.eventBus().<JsonObject>request("kvpager." + name + ".coordinator", body,
                new DeliveryOptions().addHeader(WorkerProtocol.ACTION_HEADER, action).setSendTimeout(10_000)).map(m -> m.body());
    }

    @Test
    void aFreeOfTheOwnerBeforeNeverFreesTheBlocksOfTheNewOwner(Vertx vertx) {
        String name = "stale-blocks";
        KvCacheOptions options = SimPool.options(name);
        KvCache cache = await(KvCache.deploy(vertx, options));
        CoordinatorVerticle verticle = ((LocalKvCache) cache).verticle();
        Coordinator first = verticle.coordinator();
        String before = first.owner().toString();

        // an engine in another process takes a page's blocks: the answer names the owner that handed them out
        JsonObject old = await(toCoordinator(vertx, name, "alloc", new JsonObject().put("blocks", SimPool.BLOCKS_PER_PAGE)));
        assertThat(old.getString("owner")).isEqualTo(before);
        JsonArray oldBlocks = old.getJsonArray("blocks");
        Allocation local = await(cache.alloc(2));
        assertThat(local.incarnation()).isEqualTo(before);

        // another owner claims the group on a rank; the coordinator is displaced and comes back as a new owner
        JsonObject claim = new CreateTensorsRequest(0, new Owner("intruder-node", 1), options.geometry(), options.isZeroPage(), null)
                .toJson().put("pp", 0).put("tp", 1);
        await(SimPool.toRank(vertx, name, 0, 1, "create-tensors", claim));
        assertThat(await(cache.alloc(SimPool.BLOCKS_PER_PAGE)).isMiss()).isTrue();
        org.awaitility.Awaitility.await().atMost(Duration.ofSeconds(10)).until(() -> verticle.coordinator() != first);
        Coordinator second = verticle.coordinator();
        String now = second.owner().toString();

        // the new owner hands out the same ids to another caller
        JsonObject fresh = await(toCoordinator(vertx, name, "alloc", new JsonObject().put("blocks", SimPool.BLOCKS_PER_PAGE)));
        assertThat(fresh.getString("owner")).isEqualTo(now).isNotEqualTo(before);
        assertThat(fresh.getJsonArray("blocks").getList()).containsAnyElementsOf(oldBlocks.getList());
        long used = await(cache.stats()).pool().usedBlocks();
        assertThat(used).isEqualTo(SimPool.BLOCKS_PER_PAGE);

        // the stale free, over the bus and in process: refused with DISPLACED, nothing freed
        Throwable refused = failure(toCoordinator(vertx, name, "free", new JsonObject().put("blocks", oldBlocks).put("owner", before)));
        assertThat(refused).isInstanceOf(ReplyException.class);
        assertThat(((ReplyException) refused).failureCode()).isEqualTo(FailureCode.DISPLACED.code());
        assertThat(refused.getMessage()).contains("handed out by owner " + before).contains("not by owner " + now)
                .contains("nothing freed");
        Throwable inProcess = failure(onContext(verticle, () -> second.free(local.blocks(), local.incarnation())));
        assertThat(inProcess).isInstanceOf(KvPagerException.class);
        assertThat(((KvPagerException) inProcess).code()).isEqualTo(FailureCode.DISPLACED);
        assertThat(await(cache.stats()).pool().usedBlocks()).isEqualTo(used);
        SimPool.invariantsHold(cache);

        // an owner that is not text is refused as a bad request, nothing freed either
        Throwable bad = failure(toCoordinator(vertx, name, "free", new JsonObject().put("blocks", fresh.getJsonArray("blocks")).put("owner", 7)));
        assertThat(((ReplyException) bad).failureCode()).isEqualTo(FailureCode.BAD_REQUEST.code());
        assertThat(bad.getMessage()).contains("owner must be a non-empty string, got 7");
        assertThat(await(cache.stats()).pool().usedBlocks()).isEqualTo(used);

        // the holder of the new blocks frees them under the owner that handed them out
        await(toCoordinator(vertx, name, "free", new JsonObject().put("blocks", fresh.getJsonArray("blocks")).put("owner", now)));
        assertThat(await(cache.stats()).pool().usedBlocks()).isZero();
        SimPool.invariantsHold(cache);
        await(cache.close());
    }
}
