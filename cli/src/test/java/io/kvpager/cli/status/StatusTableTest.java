package io.kvpager.cli.status;

import static org.assertj.core.api.Assertions.assertThat;

import io.kvpager.cache.CacheStats;
import io.kvpager.cache.PoolStats;
import java.util.List;
import org.junit.jupiter.api.Test;

class StatusTableTest {

    @Test
    void oneRowPerInstanceAndPerRank() {
        String text = StatusTable.render(List.of(InstanceStatus.of(StatusFixtures.healthy())));
        assertThat(text.lines().toList()).first().asString()
                .startsWith("instance  state  ranks up  limit/rank  mapped/rank  reserve  in use");
        assertThat(text)
                .containsPattern("model-7b\\s+ready\\s+2/2\\s+70.5 GiB\\s+1.5 GiB\\s+2 pages\\s+10 pages\\s+300\\s+77\\s+3")
                .containsPattern("model-7b\\s+pp0/tp0\\s+up\\s+sim:0 pp0/tp0\\s+12\\s+12\\s+30.0 GiB\\s+141.0 GiB")
                .containsPattern("model-7b\\s+pp0/tp1\\s+up");
    }

    @Test
    void downRanksUnreachableInstancesAndFailuresAreSpelledOut() {
        String text = StatusTable.render(List.of(InstanceStatus.of(StatusFixtures.oneRankDown()),
                InstanceStatus.unreachable("model-13b", "no coordinator for instance model-13b at kvpager.model-13b.coordinator")));
        assertThat(text)
                .containsPattern("model-70b\\s+degraded\\s+1/2")
                .containsPattern("model-70b\\s+pp0/tp1\\s+down\\s+-")
                .containsPattern("model-13b\\s+unreachable")
                .contains("model-70b pp0/tp1 TIMEOUT: no answer within 60000 ms")
                .contains("model-70b refill failed: map of pages [3] failed on 1 of 2 ranks")
                .contains("model-13b: no coordinator for instance model-13b");
    }

    @Test
    void aLimitAboveTheGpuShowsTheGpusSize() {
        CacheStats base = StatusFixtures.healthy();
        PoolStats p = base.pool();
        // 4096 pages of 128 MiB: a limit of 512 GiB on a 141 GiB GPU
        PoolStats unlimited = new PoolStats(p.mappedPages(), p.inUsePages(), p.reservePages(), p.reclaimedPages(), p.quarantinedPages(),
                p.freePages(), p.usedBlocks(), 4096, p.lowMark(), p.highMark(), p.allocs(), p.misses(), p.maps(), p.unmaps(),
                p.bytesPerPage());
        CacheStats stats = new CacheStats(base.instance(), base.group(), base.stages(), base.tp(), base.state(), null, null, unlimited,
                base.ranks());
        assertThat(StatusTable.limit(stats)).isEqualTo("141.0 GiB (GPU)");
        assertThat(StatusTable.limit(base)).isEqualTo("70.5 GiB");
    }

    @Test
    void onlyReadyIsReady() {
        assertThat(InstanceStatus.of(StatusFixtures.healthy()).state()).isEqualTo("ready");
        assertThat(InstanceStatus.of(StatusFixtures.oneRankDown()).state()).isEqualTo("degraded");
        assertThat(InstanceStatus.unreachable("x", "gone").state()).isEqualTo("unreachable");
        CacheStats base = StatusFixtures.healthy();
        CacheStats degraded = new CacheStats(base.instance(), base.group(), base.stages(), base.tp(), "degraded", null,
                "refill keeps failing", base.pool(), base.ranks());
        assertThat(InstanceStatus.of(degraded).healthy()).isFalse();
        assertThat(InstanceStatus.of(degraded).state()).isEqualTo("degraded");
    }

    @Test
    void nothingToShow() {
        assertThat(StatusTable.render(List.of())).isEqualTo("no cache instances\n");
    }

    @Test
    void healthNeedsAnAnswerReadinessAndEveryRank() {
        assertThat(InstanceStatus.of(StatusFixtures.healthy()).healthy()).isTrue();
        assertThat(InstanceStatus.of(StatusFixtures.oneRankDown()).healthy()).isFalse();
        assertThat(InstanceStatus.unreachable("x", "gone").healthy()).isFalse();
    }
}
