package io.kvpager.impl.coordinator;

import io.kvpager.protocol.RankTarget;
import io.kvpager.Allocation;
import io.kvpager.cache.CacheState;
import io.kvpager.FailureCode;
import io.kvpager.cache.CacheStats;
import io.kvpager.cache.KvCache;
import io.kvpager.cache.KvCacheOptions;
import io.kvpager.cache.KvPagerException;
import io.kvpager.cache.SimPool;
import io.vertx.core.Vertx;
import io.vertx.core.eventbus.DeliveryOptions;
import io.vertx.core.eventbus.ReplyException;
import io.vertx.core.json.JsonObject;
import io.vertx.junit5.VertxExtension;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import static io.kvpager.cache.SimPool.await;
import static io.kvpager.cache.SimPool.failure;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * A cache's start on three sim workers and one scripted rank standing in for the fourth: waiting
 * through errors, timing out with the last one, and a failed start that every allocation reports.
 */
@ExtendWith(VertxExtension.class)
class CoordinatorStartTest {

    private static ScriptedRank threeWorkersAndAScriptedRank(Vertx vertx, String name) {
        for (int tp = 0; tp < 3; tp++) {
            await(SimPool.deployWorker(vertx, name, 0, tp, 4));
        }
        return await(ScriptedRank.start(vertx, name, new RankTarget(0, 3)));
    }

    private static KvCacheOptions options(String name) {
        return SimPool.options(name).setLocalWorkers(false).setTensorsDeadlineMs(250).setTensorsPollMs(10);
    }

    @Test
    void aRankThatErrsTwiceThenCreatesItsTensorsStartsFine(Vertx vertx) {
        String name = "start-flaky";
        ScriptedRank scripted = threeWorkersAndAScriptedRank(vertx, name);
        scripted.script("tensors-created", new ScriptedRank.Fail(500, "cuMemAddressReserve failed: CUDA_ERROR_UNKNOWN"),
                new ScriptedRank.Fail(500, "cuMemAddressReserve failed: CUDA_ERROR_UNKNOWN"));
        KvCache cache = await(KvCache.deploy(vertx, options(name).setTensorsDeadlineMs(10_000)));
        assertThat(scripted.received("tensors-created")).hasSize(3);
        Allocation a = await(cache.alloc(1));
        assertThat(a.isMiss()).isFalse();
        assertThat(scripted.mapped).containsExactly(0);
        await(cache.close());
    }

    @Test
    void aRankThatErrsThenFallsSilentIsToldByItsErrorNotByTheTimeoutOfTheRoundTheDeadlineCutShort(Vertx vertx) {
        String name = "start-silent";
        ScriptedRank scripted = threeWorkersAndAScriptedRank(vertx, name);
        scripted.script("tensors-created", new ScriptedRank.Fail(500, "cuMemAddressReserve failed: CUDA_ERROR_OUT_OF_MEMORY"));
        scripted.always("tensors-created", new ScriptedRank.Silent(false));

        Throwable e = failure(KvCache.deploy(vertx, options(name)));
        assertThat(((KvPagerException) e).code()).isEqualTo(FailureCode.TIMEOUT);
        assertThat(scripted.received("tensors-created")).as("a second round was asked, and timed out at the deadline").hasSizeGreaterThan(1);
        assertThat(e.getMessage()).contains("tensors of group 0 not ready on pp0/tp3 after 250 ms")
                .endsWith("; last error: pp0/tp3 DRIVER_ERROR (500): pp0/tp3 group 0: cuMemAddressReserve failed: "
                        + "CUDA_ERROR_OUT_OF_MEMORY");
        assertThat(((KvPagerException) e).failures()).singleElement().satisfies(f ->
                assertThat(f.message()).endsWith("cuMemAddressReserve failed: CUDA_ERROR_OUT_OF_MEMORY"));
    }

    @Test
    void aRankThatNeverCreatesItsTensorsFailsTheDeployAfterTheDeadline(Vertx vertx) {
        String name = "start-never";
        ScriptedRank scripted = threeWorkersAndAScriptedRank(vertx, name);
        scripted.script("tensors-created", new ScriptedRank.Fail(500, "cuMemAddressReserve failed: CUDA_ERROR_OUT_OF_MEMORY"));
        scripted.always("tensors-created", new ScriptedRank.NotYet());
        long started = System.nanoTime();

        Throwable e = failure(KvCache.deploy(vertx, options(name)));
        assertThat((System.nanoTime() - started) / 1_000_000).isGreaterThanOrEqualTo(250);
        assertThat(e).isInstanceOf(KvPagerException.class);
        assertThat(((KvPagerException) e).code()).isEqualTo(FailureCode.TIMEOUT);
        assertThat(e.getMessage()).contains("tensors of group 0 not ready on pp0/tp3 after 250 ms")
                .endsWith("; last error: pp0/tp3 DRIVER_ERROR (500): pp0/tp3 group 0: cuMemAddressReserve failed: "
                        + "CUDA_ERROR_OUT_OF_MEMORY");
        // what the other ranks created is destroyed again
        for (int tp = 0; tp < 3; tp++) {
            JsonObject created = await(SimPool.toRank(vertx, name, 0, tp, "tensors-created", new JsonObject().put("group", 0)));
            assertThat(created.getBoolean("created")).as("tp" + tp).isFalse();
        }
        assertThat(scripted.received("destroy-tensors")).hasSize(1);
    }

    @Test
    void aFailedLazyStartFailsEveryAllocationWithItsCause(Vertx vertx) {
        String name = "start-lazy";
        ScriptedRank scripted = threeWorkersAndAScriptedRank(vertx, name);
        scripted.script("tensors-created", new ScriptedRank.Fail(503, "the worker is stopping"));
        scripted.always("tensors-created", new ScriptedRank.NotYet());
        KvCache cache = await(KvCache.deploy(vertx, options(name).setLazyStart(true)));

        Throwable first = failure(cache.alloc(1));
        assertThat(first).isInstanceOf(KvPagerException.class)
                .hasMessageEndingWith("; last error: pp0/tp3 STOPPING (503): pp0/tp3 group 0: the worker is stopping");
        assertThat(failure(cache.alloc(1))).isSameAs(first);
        CacheStats stats = await(cache.stats());
        assertThat(stats.state()).isEqualTo(CacheState.FAILED);
        assertThat(stats.startFailure()).isEqualTo(first.getMessage());

        Throwable remote = failure(vertx.eventBus().request("kvpager." + name + ".coordinator", new JsonObject().put("blocks", 1),
                new DeliveryOptions().addHeader("action", "alloc")));
        assertThat(remote).isInstanceOf(ReplyException.class).hasMessage(first.getMessage());
        assertThat(((ReplyException) remote).failureCode()).isEqualTo(FailureCode.TIMEOUT.code());
        await(cache.close());
    }

    @Test
    void aLazyStartServesAllocationsOnceTheTensorsExist(Vertx vertx) {
        String name = "start-lazy-ok";
        ScriptedRank scripted = threeWorkersAndAScriptedRank(vertx, name);
        scripted.script("tensors-created", new ScriptedRank.NotYet(), new ScriptedRank.NotYet());
        KvCache cache = await(KvCache.deploy(vertx, options(name).setLazyStart(true).setTensorsDeadlineMs(10_000)));
        assertThat(await(cache.alloc(1)).isMiss()).isFalse();
        await(cache.close());
    }
}
