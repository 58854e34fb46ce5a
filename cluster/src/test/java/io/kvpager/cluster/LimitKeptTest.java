package io.kvpager.cluster;

import io.kvpager.LimitResult;
import io.kvpager.cache.CacheStats;
import io.kvpager.cache.KvCache;
import io.kvpager.cache.KvCacheOptions;
import io.kvpager.cluster.process.TestClusters;
import io.kvpager.sim.SimOptions;
import io.kvpager.worker.RankWorkerOptions;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import static io.kvpager.cluster.process.TestClusters.await;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * A limit set at run time lives with the instance in the cluster's records: a coordinator of the
 * instance started later applies it, and a change of a lower revision never replaces it there.
 */
class LimitKeptTest {

    private static final long PAGE_ID_BYTES = 4 * (2L << 20);
    private ClusterNode here;

    @AfterEach
    void tearDown() {
        if (here != null) {
            await(here.close());
        }
    }

    private static KvCacheOptions options(String name) {
        return new KvCacheOptions().setInstance(name).setTp(1).setLayers(2).setKvBuffers(2).setBlockBytes(64 << 10)
                .setPages(16).setReserveLow(0).setReserveHigh(0).setAdaptiveReserve(false).setRefillIntervalMs(5)
                .setSendTimeoutMs(5_000).setTensorsDeadlineMs(10_000).setTensorsPollMs(10).setLocalWorkers(false)
                .setMemoryLimitBytes(16 * PAGE_ID_BYTES);
    }

    @Test
    void aRestartedCoordinatorAppliesTheLastLimit() {
        here = TestClusters.startHere(TestClusters.freshName("kvpager-limit"));
        String name = "kept";
        SimOptions sim = SimOptions.defaults().withGpuKey(name).withCapacityBytes(1L << 30);
        await(here.deployWorker(new RankWorkerOptions().setInstance(name).setPp(0).setTp(0).setGpu(0).setSim(sim)));
        KvCache first = await(here.deployCache(options(name)));
        assertThat(await(first.stats()).pool().limitPages()).isEqualTo(16);
        LimitResult set = await(first.setMemoryLimit(5 * PAGE_ID_BYTES));
        assertThat(set.outcome()).isEqualTo(LimitResult.Outcome.APPLIED);
        await(first.close());

        KvCache second = await(here.deployCache(options(name)));
        CacheStats stats = await(second.stats());
        assertThat(stats.pool().limitPages()).as("the limit set on the first coordinator").isEqualTo(5);
        // an older revision neither applies nor replaces the kept one
        assertThat(await(second.setMemoryLimit(9 * PAGE_ID_BYTES, set.revision() - 1)).outcome()).isEqualTo(LimitResult.Outcome.STALE);
        LimitResult later = await(second.setMemoryLimit(7 * PAGE_ID_BYTES));
        await(second.close());

        KvCache third = await(here.deployCache(options(name)));
        assertThat(await(third.stats()).pool().limitPages()).isEqualTo(7);
        assertThat(await(third.setMemoryLimit(7 * PAGE_ID_BYTES, later.revision())).revision()).isEqualTo(later.revision());
        await(third.close());
    }
}
