package io.kvpager.metrics;

import static org.assertj.core.api.Assertions.assertThat;

import io.kvpager.FailureCode;
import io.kvpager.cache.RankFailure;
import io.kvpager.cache.RankStats;
import org.junit.jupiter.api.Test;

/** A rank's handles and device memory as the meters export them: what it said, or unknown while it does not answer. */
class RankMetersTest {

    @Test
    void aRankThatDoesNotAnswerExportsItsHandlesAndDeviceMemoryAsUnknownNotAsNone() {
        RankStats answering = new RankStats("pp0/tp0", true, null, "sim:0", 2, 2, 2, 671_088_640L, 1L << 30, 1L << 30);
        RankStats down = RankStats.down(new RankFailure("pp0/tp1", FailureCode.NO_RANK, "its node left the cluster"));
        assertThat(KvCacheMeters.ofAnswering(answering, RankStats::handles)).isEqualTo(2.0);
        assertThat(KvCacheMeters.ofAnswering(answering, RankStats::deviceUsedBytes)).isEqualTo(671_088_640.0);
        assertThat(down.handles()).as("what a down rank's stats carry").isZero();
        assertThat(KvCacheMeters.ofAnswering(down, RankStats::handles)).isNaN();
        assertThat(KvCacheMeters.ofAnswering(down, RankStats::deviceUsedBytes)).isNaN();
        assertThat(KvCacheMeters.ofAnswering(null, RankStats::handles)).isNaN();
    }
}
