package io.kvpager.impl.coordinator;

import static io.kvpager.cache.SimPool.await;
import static org.assertj.core.api.Assertions.assertThat;

import io.kvpager.Allocation;
import io.kvpager.cache.KvCache;
import io.kvpager.cache.SimPool;
import io.kvpager.internal.CoordinatorView;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.junit5.VertxExtension;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * {@code fence()} runs on the coordinator's context like every other call: its id comes back only
 * once the coordinator has opened it, and a free the caller asks after it, even before that
 * answer, falls under it.
 */
@ExtendWith(VertxExtension.class)
class FenceOnContextTest {

    @Test
    void aFenceAnswersOnceTheCoordinatorOpenedItAndHoldsTheFreesAskedAfterIt(Vertx vertx) throws InterruptedException {
        KvCache cache = await(KvCache.deploy(vertx, SimPool.options("fence-ctx").setTp(1)));
        CoordinatorView view = CoordinatorView.of(cache);
        Allocation a = await(cache.alloc(SimPool.BLOCKS_PER_PAGE));

        // the coordinator busy: what this thread asks now waits its turn
        CountDownLatch busy = new CountDownLatch(1);
        CountDownLatch release = new CountDownLatch(1);
        cache.context().runOnContext(v -> {
            busy.countDown();
            try {
                release.await(10, TimeUnit.SECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        });
        assertThat(busy.await(10, TimeUnit.SECONDS)).isTrue();
        Future<Long> fence = cache.fence();
        Future<Void> freed = cache.free(a);
        // no id yet: the coordinator has not opened the fence (a fence id handed out before that would
        // name a fence the coordinator does not know, and a retired() that reached it first would fail)
        assertThat(fence.isComplete()).isFalse();
        release.countDown();

        long id = await(fence);
        await(freed);
        assertThat(openFences(view)).isEqualTo(1);
        // the free came after the fence: its page stays mapped until the fence retires
        assertThat(await(cache.stats()).pool().reclaimedPages()).isEqualTo(1);
        await(cache.trim());
        assertThat(await(cache.stats()).pool().mappedPages()).isEqualTo(1);

        await(cache.retired(id));
        assertThat(openFences(view)).isZero();
        assertThat(await(cache.stats()).pool().reclaimedPages()).isZero();
        await(cache.close());
    }

    private static int openFences(CoordinatorView view) {
        return await(view.call(inside -> inside.ledger().stats().openFences()));
    }
}
