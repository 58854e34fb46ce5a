package io.kvpager.impl.worker;

import io.kvpager.sim.SimOptions;
import io.kvpager.worker.RankWorkerOptions;
import io.vertx.core.json.JsonObject;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** What follows from a worker's options; reading them is {@code RankWorkerOptionsTest}'s. */
class WorkerConfigTest {

    private static RankWorkerOptions options() {
        return new RankWorkerOptions().setInstance("llama-70b_a").setPp(1).setTp(3).setGpu(2)
                .setSim(SimOptions.defaults().withCapacityBytes(1L << 30));
    }

    @Test
    void namesTheRankItsAddressAndItsThread() {
        WorkerConfig config = new WorkerConfig(options());
        assertThat(config.rank()).isEqualTo("pp1/tp3");
        assertThat(config.address()).isEqualTo("kvpager.llama-70b_a.pp1.tp3");
        assertThat(config.workerPoolName()).isEqualTo("kvpager-gpu2-pp1-tp3");
        assertThat(new WorkerConfig(config.toJson())).isEqualTo(config);
        assertThat(config.options()).isEqualTo(options());
    }

    @Test
    void theLeaseGraceDefaultsToThreeSeconds() {
        assertThat(new WorkerConfig(options()).leaseGraceMs()).isEqualTo(WorkerConfig.DEFAULT_LEASE_GRACE_MS).isEqualTo(3_000);
        assertThat(new WorkerConfig(options().setLeaseGraceMs(0L)).leaseGraceMs()).isZero();
    }

    @Test
    void theGpuBudgetIsTheSetShareInWholeGranules() {
        long granule = 2L << 20;
        long h200 = 150_754_820_096L; // what cuMemGetInfo reports as an H200's total
        WorkerConfig cuda = new WorkerConfig(options().setDevice("cuda"));
        assertThat(cuda.gpuMemoryPercent()).isEqualTo(90);
        assertThat(cuda.gpuBudgetBytes(h200, granule)).isEqualTo(h200 * 9 / 10 / granule * granule)
                .isLessThanOrEqualTo(h200 * 9 / 10).isGreaterThan(h200 * 9 / 10 - granule);
        // the sim holds nothing but pages: all of it, to the byte
        assertThat(new WorkerConfig(options()).gpuBudgetBytes(h200, granule)).isEqualTo(h200);
        assertThat(new WorkerConfig(options().setGpuMemoryPercent(100).setDevice("cuda")).gpuBudgetBytes(h200, granule)).isEqualTo(h200);
        assertThat(new WorkerConfig(options().setGpuMemoryPercent(50)).gpuBudgetBytes(64 * granule + 5, granule)).isEqualTo(32 * granule);
        // no overflow near the largest sizes, and never below one byte
        assertThat(new WorkerConfig(options().setGpuMemoryPercent(99)).gpuBudgetBytes(Long.MAX_VALUE, 1)).isEqualTo(Long.MAX_VALUE / 100 * 99
                + Long.MAX_VALUE % 100 * 99 / 100);
        assertThat(new WorkerConfig(options().setGpuMemoryPercent(1)).gpuBudgetBytes(granule, granule)).isEqualTo(1);
    }

    @Test
    void simOptionsGoToTheSimFactoryOnly() {
        assertThat(new WorkerConfig(options()).deviceOptions()).isEqualTo(SimOptions.defaults().withCapacityBytes(1L << 30).toMap());
        assertThat(new WorkerConfig(options().setDevice("cuda")).deviceOptions()).isEmpty();
    }

    @Test
    void laterChangesToTheOptionsDoNotReachIt() {
        RankWorkerOptions options = options();
        WorkerConfig config = new WorkerConfig(options);
        options.setTp(0).setSim(SimOptions.defaults());
        config.options().setTp(5);
        assertThat(config.tp()).isEqualTo(3);
        assertThat(config.sim()).isEqualTo(SimOptions.defaults().withCapacityBytes(1L << 30));
    }

    @Test
    void refusesWhatItsOptionsRefuseInTheSameWords() {
        assertThatThrownBy(() -> new WorkerConfig(new JsonObject().put("instance", "a.b"))).isInstanceOf(IllegalArgumentException.class)
                .hasMessage("instance must be 1 to 64 letters, digits, '-' or '_' (it is part of event-bus addresses), got 'a.b'");
        assertThatThrownBy(() -> new WorkerConfig(new JsonObject().put("pp", 0).put("tp", 0)))
                .isInstanceOf(IllegalArgumentException.class).hasMessageStartingWith("instance is required");
    }
}
