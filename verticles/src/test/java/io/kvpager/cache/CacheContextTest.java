package io.kvpager.cache;

import io.vertx.core.Context;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.junit5.VertxExtension;
import io.vertx.junit5.VertxTestContext;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import static io.kvpager.cache.SimPool.BLOCKS_PER_PAGE;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@link KvCache#context()}: a call made on the coordinator's own context reaches the ledger
 * without a hand-off, and its answer comes back there.
 */
@ExtendWith(VertxExtension.class)
class CacheContextTest {

    @Test
    void aCallOnTheCachesContextReachesTheLedgerWithoutAHandOff(Vertx vertx, VertxTestContext test) {
        KvCache cache = SimPool.await(KvCache.deploy(vertx, SimPool.options("cache-context")));
        Context coordinator = cache.context();
        assertThat(coordinator.isEventLoopContext()).isTrue();
        coordinator.runOnContext(v -> {
            Thread loop = Thread.currentThread();
            // the ledger counts at once: had the call been queued for the coordinator's thread, this
            // thread (which is that one) could not have seen its answer before returning to its loop
            Future<Integer> available = cache.availableBlocks();
            test.verify(() -> assertThat(available.isComplete()).as("answered before the call returned").isTrue());
            cache.alloc(BLOCKS_PER_PAGE).compose(allocation -> {
                test.verify(() -> {
                    assertThat(allocation.isMiss()).as(allocation.toString()).isFalse();
                    assertThat(Vertx.currentContext()).isSameAs(coordinator);
                    assertThat(Thread.currentThread()).isSameAs(loop);
                });
                return cache.free(allocation);
            }).compose(freed -> cache.close()).onComplete(test.succeedingThenComplete());
        });
    }

    @Test
    void anotherCallerStillGetsItsAnswerOnItsOwnContext(Vertx vertx, VertxTestContext test) {
        KvCache cache = SimPool.await(KvCache.deploy(vertx, SimPool.options("cache-context-other")));
        Context caller = vertx.getOrCreateContext();
        assertThat(caller).isNotSameAs(cache.context());
        caller.runOnContext(v -> cache.alloc(1).compose(allocation -> {
            test.verify(() -> {
                assertThat(allocation.isMiss()).as(allocation.toString()).isFalse();
                assertThat(Vertx.currentContext()).isSameAs(caller);
            });
            return cache.close();
        }).onComplete(test.succeedingThenComplete()));
    }
}
