package io.kvpager.cli.status;

import io.kvpager.FailureCode;
import io.kvpager.MissReason;
import io.kvpager.cache.CacheStats;
import io.kvpager.cache.PoolStats;
import io.kvpager.cache.RankFailure;
import io.kvpager.cache.RankStats;
import java.util.List;
import java.util.Map;

/** Stats as a coordinator would report them, for rendering tests. */
public final class StatusFixtures {

    private StatusFixtures() {
    }

    public static CacheStats healthy() {
        PoolStats pool = new PoolStats(12, 10, 2, 0, 0, 552, 300, 564, 1, 4, 77, Map.of(MissReason.LIMIT, 3L), 14, 2, 128L << 20);
        return new CacheStats("model-7b", 0, List.of(0), 2, "ready", null, null, pool, List.of(
                new RankStats("pp0/tp0", true, null, "sim:0 pp0/tp0", 12, 12, 36, 30L << 30, 111L << 30, 141L << 30),
                new RankStats("pp0/tp1", true, null, "sim:0 pp0/tp1", 12, 12, 36, 30L << 30, 111L << 30, 141L << 30)));
    }

    public static CacheStats oneRankDown() {
        PoolStats pool = new PoolStats(3, 1, 2, 0, 1, 60, 12, 64, 1, 4, 5, Map.of(), 4, 1, 320L << 20);
        return new CacheStats("model-70b", 0, List.of(0), 2, "ready", null, "map of pages [3] failed on 1 of 2 ranks", pool, List.of(
                new RankStats("pp0/tp0", true, null, "sim:0 pp0/tp0", 3, 3, 36, 30L << 30, 111L << 30, 141L << 30),
                RankStats.down(new RankFailure("pp0/tp1", FailureCode.TIMEOUT, "no answer within 60000 ms"))));
    }
}
