package io.kvpager.harness;

import io.kvpager.Allocation;
import io.kvpager.Layout;
import io.kvpager.cache.KvCache;
import io.kvpager.cache.KvCacheOptions;
import io.vertx.core.Vertx;
import io.vertx.core.eventbus.DeliveryOptions;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.time.Duration;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The snapshot that the matrix, the soak and the fuzz rely on sees what it must: a page mapped
 * behind the coordinator's back, a rank gone without the coordinator knowing, and agreement once
 * they are undone.
 */
class PoolSnapshotTest {

    private static final Duration BOUND = Duration.ofSeconds(20);
    private Vertx vertx;
    private SimRanks ranks;
    private KvCache cache;

    @BeforeEach
    void start() {
        vertx = Vertx.vertx();
        ranks = Bounded.await(SimRanks.deploy(vertx, "snapshot", 4, new JsonObject().put("capacityBytes", 1L << 30)), BOUND, "workers");
        cache = Bounded.await(KvCache.deploy(vertx, new KvCacheOptions().setInstance("snapshot").setTp(4).setLayers(2)
                .setKvBuffers(2).setBlockBytes(512 << 10).setPages(16).setLayout(Layout.PER_LAYER).setReserveLow(0)
                .setReserveHigh(0).setAdaptiveReserve(false)), BOUND, "the cache");
    }

    @AfterEach
    void stop() {
        Bounded.await(cache.close(), BOUND, "closing the cache");
        Bounded.await(ranks.close(), BOUND, "closing the workers");
        assertThat(ranks.leftOver()).isEmpty();
        ranks.forgetGpus();
        Bounded.await(vertx.close(), BOUND, "closing Vert.x");
    }

    private PoolSnapshot snapshot() {
        return Bounded.await(PoolSnapshot.atRest(vertx, cache, ranks, BOUND), BOUND, "a snapshot");
    }

    private void toRank(int tp, String action, int page) {
        // as the group's owner, the cache's coordinator, whom the worker's stats name
        JsonObject stats = Bounded.await(vertx.eventBus().<JsonObject>request(ranks.address(tp), new JsonObject(),
                new DeliveryOptions().addHeader("action", "stats")).map(m -> m.body()), BOUND, "stats");
        JsonObject body = new JsonObject().put("group", 0).put("pages", new JsonArray().add(page))
                .put("requestId", action + "-behind-the-back").put("owner", stats.getJsonObject("groups").getJsonObject("0").getString("owner"));
        Bounded.await(vertx.eventBus().request(ranks.address(tp), body, new DeliveryOptions().addHeader("action", action)),
                BOUND, action);
    }

    @Test
    void aPageMappedBehindTheLedgersBackIsSeenAndAgreementReturnsWhenItGoes() {
        Allocation a = Bounded.await(cache.alloc(8), BOUND, "an allocation");
        assertThat(a.isMiss()).isFalse();
        PoolSnapshot agreed = snapshot();
        assertThat(agreed.disagreements()).isEmpty();
        assertThat(agreed.ledger().mappedPages()).isEqualTo(2);
        assertThat(agreed.ranks()).allSatisfy(r -> assertThat(r.deviceHandles()).isEqualTo(2 * 4));

        toRank(2, "map", 9);
        assertThat(snapshot().disagreements()).singleElement().asString()
                .startsWith("pp0/tp2: the ledger believes 2 mapped pages × 4 + 0 pooled + 0 unreleased = 8 handles, the device holds 12");

        toRank(2, "unmap", 9);
        PoolSnapshot again = snapshot();
        assertThat(again.disagreements()).isEmpty();
        assertThat(again.ranks().get(2).workerFigure("pooledHandles")).as("the unmapped handles wait in the rank's pool").isEqualTo(4);
    }

    @Test
    void aRankGoneWithoutTheCoordinatorKnowingIsSeen() {
        Allocation a = Bounded.await(cache.alloc(4), BOUND, "an allocation");
        assertThat(a.isMiss()).isFalse();
        Bounded.await(ranks.undeploy(3), BOUND, "undeploying pp0/tp3");
        assertThat(snapshot().disagreements()).singleElement().asString()
                .startsWith("pp0/tp3: its worker does not answer").endsWith("yet the coordinator counts it in the pool");
        Bounded.await(ranks.redeploy(3), BOUND, "redeploying pp0/tp3");
        // the next map finds it without tensors, then brings it back
        Allocation b = Bounded.await(cache.alloc(4), BOUND, "an allocation that maps");
        assertThat(b.isMiss()).as(b.toString()).isTrue();
        Allocation c = Bounded.await(cache.alloc(4), BOUND, "an allocation after the rank rejoined");
        assertThat(c.isMiss()).as(c.toString()).isFalse();
        assertThat(snapshot().disagreements()).isEmpty();
    }
}
