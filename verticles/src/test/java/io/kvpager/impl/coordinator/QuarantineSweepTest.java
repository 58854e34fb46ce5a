package io.kvpager.impl.coordinator;

import io.kvpager.Allocation;
import io.kvpager.cache.KvCache;
import io.kvpager.cache.SimPool;
import io.kvpager.protocol.RankTarget;
import io.vertx.core.Vertx;
import io.vertx.junit5.VertxExtension;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import java.time.Duration;
import java.util.List;

import static io.kvpager.cache.SimPool.await;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * The sweep counts a rank that has no tensors of the group (it gave the group back: its lease
 * ended while its coordinator was cut off) as holding none of the quarantined pages, so they come
 * back instead of staying quarantined while the sweep asks again every few seconds for ever.
 */
@ExtendWith(VertxExtension.class)
class QuarantineSweepTest {

    @Test
    void aRankWithoutTheGroupsTensorsHoldsNoneOfTheQuarantinedPages(Vertx vertx) {
        String name = "sweep-no-tensors";
        for (int tp = 0; tp < 3; tp++) {
            await(SimPool.deployWorker(vertx, name, 0, tp, 4));
        }
        ScriptedRank scripted = await(ScriptedRank.start(vertx, name, new RankTarget(0, 3)));
        KvCache cache = await(KvCache.deploy(vertx, SimPool.options(name).setLocalWorkers(false).setTensorsDeadlineMs(10_000)));
        scripted.script("map", new ScriptedRank.Fail(500, "page 0: cuMemMap failed: CUDA_ERROR_UNKNOWN; "
                + "rollback incomplete (cuMemUnmap failed: CUDA_ERROR_UNKNOWN)", false, List.of(0)));
        // every later release-pages fails: only the 404 can let the pages go
        scripted.script("release-pages", new ScriptedRank.Fail(404, "group 0: no tensors on this rank; send create-tensors first"))
                .always("release-pages", new ScriptedRank.Fail(500, "cuMemUnmap failed: CUDA_ERROR_UNKNOWN"));

        Allocation missed = await(cache.alloc(1));
        assertThat(missed.isMiss()).as("%s", missed).isTrue();
        assertThat(missed.detail()).contains("quarantined");

        org.awaitility.Awaitility.await().atMost(Duration.ofSeconds(10))
                .until(() -> await(cache.stats()).pool().quarantinedPages() == 0);
        assertThat(scripted.received("release-pages")).hasSize(1);
        SimPool.invariantsHold(cache);
        await(cache.close());
    }
}
