package io.kvpager.metrics;

import static org.assertj.core.api.Assertions.assertThat;

import io.kvpager.FailureCode;
import io.kvpager.cache.CacheStats;
import io.kvpager.cache.PoolStats;
import io.kvpager.cache.RankFailure;
import io.kvpager.cache.RankStats;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** Only ready is ready; any other state, known or not, is degraded or failed, with its reason. */
class CacheHealthTest {

    private static final PoolStats POOL = new PoolStats(0, 0, 0, 0, 0, 16, 0, 16, 1, 4, 0, Map.of(), 0, 0, 1 << 20);
    private static final RankStats UP = new RankStats("pp0/tp0", true, null, "sim:0", 0, 0, 0, 0, 1L << 30, 1L << 30);
    private static final RankStats DOWN = new RankStats("pp0/tp1", false,
            new RankFailure("pp0/tp1", FailureCode.NO_RANK, "its node left the cluster"), "", 0, 0, 0, 0, 0, 0);

    private static CacheStats stats(String state, String startFailure, String refillFailure, RankStats... ranks) {
        return new CacheStats("h", 0, List.of(0), ranks.length, state, startFailure, refillFailure, POOL, List.of(ranks));
    }

    @Test
    void readyNeedsEveryRank() {
        assertThat(CacheHealth.of(stats("ready", null, null, UP))).isEqualTo(new CacheHealth(CacheHealth.State.READY, null));
        CacheHealth oneDown = CacheHealth.of(stats("ready", null, null, UP, DOWN));
        assertThat(oneDown.state()).isEqualTo(CacheHealth.State.DEGRADED);
        assertThat(oneDown.reason()).contains("pp0/tp1", "its node left the cluster");
    }

    @Test
    void anyOtherStateIsNotReadyAndSaysWhy() {
        CacheHealth degraded = CacheHealth.of(stats("degraded", null, "refill: map failed on pp0/tp0", UP));
        assertThat(degraded.state()).isEqualTo(CacheHealth.State.DEGRADED);
        assertThat(degraded.reason()).contains("the cache is degraded", "refill: map failed on pp0/tp0");
        assertThat(CacheHealth.of(stats("starting", null, null, UP)).stateName()).isEqualTo("degraded");
        CacheHealth failed = CacheHealth.of(stats("failed", "tensors not ready after 30000 ms", null, UP));
        assertThat(failed.state()).isEqualTo(CacheHealth.State.FAILED);
        assertThat(failed.reason()).isEqualTo("tensors not ready after 30000 ms");
        assertThat(CacheHealth.unanswered(new IllegalStateException("no coordinator")).reason()).contains("no coordinator");
    }
}
