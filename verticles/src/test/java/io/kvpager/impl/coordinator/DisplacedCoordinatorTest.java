package io.kvpager.impl.coordinator;

import io.kvpager.Allocation;
import io.kvpager.FailureCode;
import io.kvpager.LimitResult;
import io.kvpager.cache.CacheState;
import io.kvpager.cache.CacheStats;
import io.kvpager.cache.KvCache;
import io.kvpager.cache.KvCacheOptions;
import io.kvpager.cache.KvPagerException;
import io.kvpager.cache.SimPool;
import io.kvpager.protocol.CreateTensorsRequest;
import io.kvpager.protocol.Owner;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.Vertx;
import io.vertx.core.eventbus.ReplyException;
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
 * A coordinator that a rank tells it lost its group (409: a newer owner claimed it) is displaced:
 * it serves nothing from its ledger and answers {@code DISPLACED}, then comes back by itself as a
 * new owner with an empty ledger, its last limit, and the group reclaimed; the owner it displaced
 * can never claim the group back.
 */
@ExtendWith(VertxExtension.class)
class DisplacedCoordinatorTest {

    private static <T> Future<T> onContext(CoordinatorVerticle verticle, Supplier<Future<T>> work) {
        Promise<T> promise = Promise.promise();
        verticle.context().runOnContext(v -> work.get().onComplete(promise));
        return promise.future();
    }

    @Test
    void aRanksOwnerConflictDisplacesTheCoordinatorWhichComesBackAsANewOwner(Vertx vertx) {
        String name = "displaced-409";
        KvCacheOptions options = SimPool.options(name);
        KvCache cache = await(KvCache.deploy(vertx, options));
        CoordinatorVerticle verticle = ((LocalKvCache) cache).verticle();
        Coordinator first = verticle.coordinator();
        Owner before = first.owner();
        Allocation held = await(cache.alloc(SimPool.BLOCKS_PER_PAGE));
        assertThat(held.isMiss()).isFalse();
        LimitResult limit = await(cache.setMemoryLimit(8 * SimPool.PAGE_ID_BYTES));
        assertThat(limit.outcome()).isEqualTo(LimitResult.Outcome.APPLIED);

        // another owner claims the group on one rank, as a coordinator that took the pool over would
        Owner intruder = new Owner("intruder-node", 1);
        JsonObject claim = new CreateTensorsRequest(0, intruder, options.geometry(), options.isZeroPage(), null).toJson()
                .put("pp", 0).put("tp", 2);
        JsonObject reclaimed = await(SimPool.toRank(vertx, name, 0, 2, "create-tensors", claim));
        assertThat(reclaimed.getJsonObject("reclaimed").getString("owner")).isEqualTo(before.toString());

        // the next map reaches that rank, which refuses it with 409 naming the intruder
        Allocation next = await(cache.alloc(SimPool.BLOCKS_PER_PAGE));
        assertThat(next.isMiss()).isTrue();
        assertThat(first.displacedBecause()).contains("intruder-node#1");
        Throwable refused = failure(onContext(verticle, () -> first.alloc(1)));
        assertThat(refused).isInstanceOf(KvPagerException.class);
        assertThat(((KvPagerException) refused).code()).isEqualTo(FailureCode.DISPLACED);
        assertThat(refused.getMessage()).contains("owner " + before + " was displaced").contains("every block it allocated is gone");

        // back by itself: a new owner, an empty ledger, the last limit, serving
        org.awaitility.Awaitility.await().atMost(Duration.ofSeconds(10)).until(() -> verticle.coordinator() != first);
        Coordinator second = verticle.coordinator();
        assertThat(second.owner()).isNotEqualTo(before);
        Allocation served = await(cache.alloc(SimPool.BLOCKS_PER_PAGE));
        assertThat(served.isMiss()).as("%s", served).isFalse();
        CacheStats stats = await(cache.stats());
        assertThat(stats.state()).isEqualTo(CacheState.READY);
        assertThat(stats.pool().inUsePages()).isEqualTo(1);
        assertThat(stats.pool().limitPages()).isEqualTo(limit.effectivePages());
        SimPool.invariantsHold(cache);

        // the owner displaced on that rank never takes the group back
        Throwable again = failure(SimPool.toRank(vertx, name, 0, 2, "create-tensors", claim));
        assertThat(again).isInstanceOf(ReplyException.class);
        assertThat(((ReplyException) again).failureCode()).isEqualTo(FailureCode.CONFLICT.code());
        assertThat(again.getMessage()).contains("cannot claim it again");
        await(cache.close());
    }
}
