package io.kvpager.cache;

import io.kvpager.Allocation;
import io.kvpager.FailureCode;
import io.kvpager.Layout;
import io.kvpager.sim.MappedRange;
import io.kvpager.sim.ReservedRange;
import io.kvpager.sim.SimDevice;
import io.vertx.core.Vertx;
import io.vertx.junit5.VertxExtension;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import java.util.List;

import static io.kvpager.cache.SimPool.BLOCKS_PER_PAGE;
import static io.kvpager.cache.SimPool.BLOCK_BYTES;
import static io.kvpager.cache.SimPool.PAGES;
import static io.kvpager.cache.SimPool.await;
import static io.kvpager.cache.SimPool.deployWorkers;
import static io.kvpager.cache.SimPool.device;
import static io.kvpager.cache.SimPool.failure;
import static io.kvpager.cache.SimPool.options;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * {@link KvCache#views()} against the simulated devices' own records: every view lies in the range
 * its rank reserved, an allocated block's address is mapped there, and a closed cache or a rank
 * down fails with a {@link KvPagerException} that says which.
 */
@ExtendWith(VertxExtension.class)
class KvCacheViewsTest {

    private static final int TP = 4;
    private static final int LAYERS = 2;
    private static final int BUFFERS = 2;

    @Test
    void pageMajorViewsInterleaveTheTensorsInTheOneReservedRangeOfEachRank(Vertx vertx) {
        String name = "views-page-major";
        KvCache cache = await(KvCache.deploy(vertx, options(name)));
        List<RankViews> ranks = await(cache.views());

        assertThat(ranks).extracting(RankViews::rank).containsExactly("pp0/tp0", "pp0/tp1", "pp0/tp2", "pp0/tp3");
        long pageIdBytes = LAYERS * BUFFERS * BLOCKS_PER_PAGE * BLOCK_BYTES;
        for (RankViews rank : ranks) {
            assertThat(rank.pp()).isZero();
            SimDevice device = device(name, rank.tp(), rank.rank());
            assertThat(device.reservations()).hasSize(1);
            ReservedRange reserved = device.reservations().getFirst();
            assertThat(rank.buffers()).hasSize(LAYERS * BUFFERS)
                    .extracting(v -> v.layer() + "/" + v.buffer()).containsExactly("0/0", "0/1", "1/0", "1/1");
            for (BufferView view : rank.buffers()) {
                int tensor = view.layer() * BUFFERS + view.buffer();
                assertThat(view.address()).isEqualTo(reserved.address() + tensor * BLOCK_BYTES);
                assertThat(view.blockBytes()).isEqualTo(BLOCK_BYTES);
                assertThat(view.blockStride()).isEqualTo(LAYERS * BUFFERS * BLOCK_BYTES);
                assertThat(view.pageStride()).isEqualTo(pageIdBytes);
                assertThat(view.blocksPerPage()).isEqualTo(BLOCKS_PER_PAGE);
                assertThat(view.blockCount()).isEqualTo(PAGES * BLOCKS_PER_PAGE);
                assertThat(view.end()).isLessThanOrEqualTo(reserved.address() + reserved.size());
            }
            assertThat(rank.buffer(1, 1).end()).isEqualTo(reserved.address() + reserved.size());
        }

        Allocation blocks = await(cache.alloc(BLOCKS_PER_PAGE + 1));
        for (RankViews rank : ranks) {
            List<MappedRange> mapped = device(name, rank.tp(), rank.rank()).mappings();
            for (int block : blocks.blocks()) {
                for (BufferView view : rank.buffers()) {
                    long at = view.blockAddress(block);
                    assertThat(mapped).as("%s block %d of layer %d buffer %d", rank.rank(), block, view.layer(), view.buffer())
                            .anyMatch(m -> m.accessible() && m.address() <= at && at + BLOCK_BYTES <= m.address() + m.size());
                }
            }
        }
        await(cache.free(blocks));
        await(cache.close());
    }

    @Test
    void perLayerViewsEachCoverExactlyOneReservedRange(Vertx vertx) {
        String name = "views-per-layer";
        KvCache cache = await(KvCache.deploy(vertx, options(name).setLayout(Layout.PER_LAYER)));
        for (RankViews rank : await(cache.views())) {
            List<ReservedRange> reserved = device(name, rank.tp(), rank.rank()).reservations();
            assertThat(rank.buffers()).hasSize(LAYERS * BUFFERS);
            assertThat(rank.buffers()).extracting(v -> new ReservedRange(v.address(), v.end() - v.address()))
                    .containsExactlyInAnyOrderElementsOf(reserved);
            for (BufferView view : rank.buffers()) {
                assertThat(view.blockStride()).isEqualTo(BLOCK_BYTES);
                assertThat(view.blockAddress(BLOCKS_PER_PAGE)).isEqualTo(view.address() + view.pageStride());
            }
        }
        await(cache.close());
    }

    @Test
    void aBlockOutsideThePoolOrAViewNotHeldIsRefused(Vertx vertx) {
        KvCache cache = await(KvCache.deploy(vertx, options("views-refused")));
        RankViews rank = await(cache.views()).getFirst();
        BufferView view = rank.buffer(0, 0);
        assertThatThrownBy(() -> view.blockAddress(PAGES * BLOCKS_PER_PAGE)).isInstanceOf(IllegalArgumentException.class)
                .hasMessage("block " + PAGES * BLOCKS_PER_PAGE + " is outside 0.." + (PAGES * BLOCKS_PER_PAGE - 1));
        assertThatThrownBy(() -> view.blockAddress(-1)).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> rank.buffer(LAYERS, 0)).isInstanceOf(IllegalArgumentException.class)
                .hasMessage("pp0/tp0 holds no view of layer 2 buffer 0");
        await(cache.close());
    }

    @Test
    void aClosedCacheFailsWithStopping(Vertx vertx) {
        KvCache cache = await(KvCache.deploy(vertx, options("views-closed")));
        await(cache.close());
        Throwable closed = failure(cache.views());
        assertThat(closed).isInstanceOf(KvPagerException.class).hasMessage("cache views-closed group 0 is closed");
        assertThat(((KvPagerException) closed).code()).isEqualTo(FailureCode.STOPPING);
    }

    @Test
    void aRankDownFailsNamingThatRank(Vertx vertx) {
        String name = "views-rank-down";
        List<String> workers = await(deployWorkers(vertx, name, TP));
        KvCache cache = await(KvCache.deploy(vertx, options(name).setLocalWorkers(false)));
        await(vertx.undeploy(workers.get(3)));

        Throwable down = failure(cache.views());
        assertThat(down).isInstanceOf(KvPagerException.class)
                .hasMessageStartingWith("views of group 0 failed on 1 of 4 ranks: pp0/tp3 NO_RANK");
        KvPagerException e = (KvPagerException) down;
        assertThat(e.code()).isEqualTo(FailureCode.NO_RANK);
        assertThat(e.failures()).extracting(RankFailure::rank).containsExactly("pp0/tp3");
        await(cache.close());
    }
}
