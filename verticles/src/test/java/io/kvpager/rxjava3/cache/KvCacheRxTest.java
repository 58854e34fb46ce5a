package io.kvpager.rxjava3.cache;

import io.kvpager.Allocation;
import io.kvpager.LimitResult;
import io.kvpager.cache.RankViews;
import io.kvpager.cache.SimPool;
import io.reactivex.rxjava3.core.Single;
import io.vertx.junit5.VertxExtension;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** The generated RxJava 3 API over the Future API: every method, lazy rx calls and eager plain ones. */
@ExtendWith(VertxExtension.class)
class KvCacheRxTest {

    @Test
    void theRxApiWrapsTheFutureApi(io.vertx.core.Vertx core) {
        io.vertx.rxjava3.core.Vertx vertx = io.vertx.rxjava3.core.Vertx.newInstance(core);
        KvCache cache = KvCache.rxDeploy(vertx, SimPool.options("rx")).blockingGet();
        assertThat(cache.getDelegate()).isNotNull();
        assertThat(KvCache.newInstance(cache.getDelegate())).isEqualTo(cache);

        Allocation a = cache.rxAlloc(3).blockingGet();
        assertThat(a.size()).isEqualTo(3);
        Allocation page = cache.rxAlloc(SimPool.BLOCKS_PER_PAGE).blockingGet();
        Allocation near = cache.rxAlloc(2, a.block(2)).blockingGet();
        assertThat(near.blocks()).containsExactly(a.block(2) + 1, a.block(2) + 2);
        cache.rxFree(near).blockingAwait();
        cache.rxFree(page).blockingAwait();
        assertThatThrownBy(() -> cache.rxAlloc(1, near.block(0)).blockingGet()).isInstanceOf(IllegalArgumentException.class)
                .hasMessage("cannot allocate near block " + near.block(0) + ": it is not allocated");
        long fence = cache.rxFence().blockingGet();
        cache.rxFree(List.of(a.block(0))).blockingAwait();
        assertThatThrownBy(() -> cache.rxFree(List.of(a.block(0))).blockingAwait()).isInstanceOf(IllegalArgumentException.class);
        cache.rxFree(List.of(a.block(1), a.block(2))).blockingAwait();
        cache.rxRetired(fence).blockingAwait();
        assertThat(cache.rxAvailableBlocks().blockingGet()).isEqualTo(SimPool.PAGES * SimPool.BLOCKS_PER_PAGE);
        assertThat(cache.rxSetMemoryLimit(SimPool.PAGE_ID_BYTES, 1).blockingGet().outcome()).isEqualTo(LimitResult.Outcome.APPLIED);
        assertThat(cache.rxStats().blockingGet().ranks()).hasSize(4);
        assertThat(cache.rxViews().blockingGet()).extracting(RankViews::rank).containsExactly("pp0/tp0", "pp0/tp1", "pp0/tp2", "pp0/tp3");
        cache.rxTrim().blockingAwait();
        assertThatThrownBy(() -> cache.rxAlloc(0).blockingGet()).isInstanceOf(IllegalArgumentException.class);
        cache.rxClose().blockingAwait();
    }

    @Test
    void rxCallsHappenOnSubscribeAndPlainCallsAtOnce(io.vertx.core.Vertx core) {
        io.vertx.rxjava3.core.Vertx vertx = io.vertx.rxjava3.core.Vertx.newInstance(core);
        KvCache cache = KvCache.deploy(vertx, SimPool.options("rx-lazy")).blockingGet();
        Single<Allocation> lazy = cache.rxAlloc(1);
        Single<Allocation> eager = cache.alloc(1);
        eager.blockingGet();
        assertThat(cache.rxStats().blockingGet().pool().allocs()).isEqualTo(1);
        Allocation a = lazy.blockingGet();
        Allocation b = lazy.blockingGet();
        assertThat(a.block(0)).isNotEqualTo(b.block(0));
        assertThat(cache.stats().blockingGet().pool().allocs()).isEqualTo(3);
        assertThat(eager.blockingGet()).isSameAs(eager.blockingGet());
        cache.close().blockingAwait();
    }
}
