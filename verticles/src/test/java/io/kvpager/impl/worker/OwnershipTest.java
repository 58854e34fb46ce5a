package io.kvpager.impl.worker;

import io.kvpager.Layout;
import io.kvpager.protocol.WorkerAction;
import io.vertx.core.Vertx;
import io.vertx.core.json.JsonObject;
import io.vertx.junit5.VertxExtension;
import io.vertx.junit5.VertxTestContext;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;
import org.junit.jupiter.params.provider.ValueSource;

import java.util.concurrent.atomic.AtomicReference;

import static io.kvpager.impl.worker.SimRank.OWNER;
import static io.kvpager.impl.worker.SimRank.PAGE_BYTES;
import static io.kvpager.impl.worker.SimRank.group;
import static io.kvpager.impl.worker.SimRank.pages;
import static io.kvpager.impl.worker.SimRank.tensors;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * A group's tensors belong to the owner that created them: another owner's requests that change
 * them are refused with 409 naming both owners and change nothing, and another owner's
 * {@code create-tensors} reclaims the group, releasing everything the previous owner left and
 * saying what it released.
 */
@ExtendWith(VertxExtension.class)
class OwnershipTest {

    private static final String OTHER = "other-node#42";

    @ParameterizedTest
    @ValueSource(strings = {"map", "unmap", "release-pages", "destroy-tensors"})
    void anotherOwnersRequestIsRefusedNamingBothAndChangesNothing(String action, Vertx vertx, VertxTestContext test) {
        SimRank rank = new SimRank(vertx);
        AtomicReference<SimRank.DeviceState> before = new AtomicReference<>();
        JsonObject body = "destroy-tensors".equals(action) ? group(7) : pages(7, "r-" + action, "map".equals(action) ? 4 : 3);
        rank.deploy()
                .compose(id -> rank.send(WorkerAction.CREATE_TENSORS, tensors(7, Layout.PAGE_MAJOR, 8)))
                .compose(created -> rank.send(WorkerAction.MAP, pages(7, "setup", 3)))
                .compose(mapped -> {
                    before.set(rank.state());
                    return rank.fails(action, body.put("owner", OTHER));
                })
                .compose(refused -> {
                    assertThat(refused.failureCode()).isEqualTo(409);
                    assertThat(refused.getMessage()).isEqualTo("pp0/tp1 group 7: owned by " + OWNER + ", not by " + OTHER
                            + ", the request's owner; a new owner claims the group with create-tensors");
                    assertThat(rank.state()).isEqualTo(before.get());
                    return rank.send(WorkerAction.STATS, new JsonObject());
                })
                .onComplete(test.succeeding(stats -> test.verify(() -> {
                    JsonObject seven = stats.getJsonObject("groups").getJsonObject("7");
                    assertThat(seven.getInteger("mappedPages")).isEqualTo(1);
                    assertThat(seven.getString("owner")).isEqualTo(OWNER);
                    test.completeNow();
                })));
    }

    @ParameterizedTest
    @EnumSource(Layout.class)
    void aNewOwnerReclaimsWhatThePreviousOneLeft(Layout layout, Vertx vertx, VertxTestContext test) {
        SimRank rank = new SimRank(vertx);
        int handlesPerPage = layout == Layout.PAGE_MAJOR ? 1 : 4;
        AtomicReference<SimRank.DeviceState> fresh = new AtomicReference<>();
        rank.deploy()
                .compose(id -> rank.send(WorkerAction.CREATE_TENSORS, tensors(7, layout, 8)))
                .compose(created -> {
                    fresh.set(rank.state());
                    return rank.send(WorkerAction.MAP, pages(7, "old-1", 0, 1, 5));
                })
                .compose(mapped -> {
                    assertThat(rank.sim().handlesAlive()).isEqualTo(fresh.get().handles() + 3 * handlesPerPage);
                    // the same geometry, from another owner: a coordinator restarted with the same options
                    return rank.send(WorkerAction.CREATE_TENSORS, tensors(7, layout, 8).put("owner", OTHER));
                })
                .compose(created -> {
                    assertThat(created.getBoolean("created")).isTrue();
                    assertThat(created.getJsonObject("reclaimed")).isEqualTo(new JsonObject().put("owner", OWNER).put("pages", 3)
                            .put("bytes", 3L * handlesPerPage * (layout == Layout.PAGE_MAJOR ? 4 * PAGE_BYTES : PAGE_BYTES)));
                    // handles back to the pool up to its bound, the rest to the driver: as a fresh group holds
                    assertThat(rank.state().handles()).isEqualTo(fresh.get().handles());
                    assertThat(rank.state().bytes()).isEqualTo(fresh.get().bytes());
                    assertThat(rank.sim().mappings()).isEmpty();
                    // the new owner starts clean: page 0 maps again
                    return rank.send(WorkerAction.MAP, pages(7, "new-1", 0).put("owner", OTHER));
                })
                .compose(mapped -> rank.fails(WorkerAction.MAP, pages(7, "old-2", 2)))
                .compose(refused -> {
                    assertThat(refused.failureCode()).isEqualTo(409);
                    assertThat(refused.getMessage()).contains("owned by " + OTHER + ", not by " + OWNER);
                    return rank.send(WorkerAction.TENSORS_CREATED, group(7));
                })
                .compose(asOld -> {
                    // the previous owner's tensors are gone, though the group exists
                    assertThat(asOld.getBoolean("created")).isFalse();
                    return rank.send(WorkerAction.TENSORS_CREATED, group(7).put("owner", OTHER));
                })
                .compose(asNew -> {
                    assertThat(asNew.getBoolean("created")).isTrue();
                    return rank.send(WorkerAction.STATS, new JsonObject());
                })
                .compose(stats -> {
                    JsonObject seven = stats.getJsonObject("groups").getJsonObject("7");
                    assertThat(seven.getString("owner")).isEqualTo(OTHER);
                    assertThat(seven.getInteger("mappedPages")).isEqualTo(1);
                    // the same owner again is no reclaim
                    return rank.send(WorkerAction.CREATE_TENSORS, tensors(7, layout, 8).put("owner", OTHER));
                })
                .compose(again -> {
                    assertThat(again.containsKey("reclaimed")).isFalse();
                    return rank.send(WorkerAction.DESTROY_TENSORS, group(7).put("owner", OTHER));
                })
                .onComplete(test.succeeding(destroyed -> test.verify(() -> {
                    assertThat(destroyed.getBoolean("destroyed")).isTrue();
                    assertThat(rank.sim().handlesAlive()).isZero();
                    assertThat(rank.sim().reservations()).isEmpty();
                    test.completeNow();
                })));
    }

    @ParameterizedTest
    @ValueSource(strings = {"a geometry the device refuses", "a broken field"})
    void aNewOwnersCreateTensorsThatIsRefusedReclaimsNothing(String defect, Vertx vertx, VertxTestContext test) {
        SimRank rank = new SimRank(vertx);
        JsonObject claim = tensors(7, Layout.PAGE_MAJOR, 8).put("owner", OTHER);
        if (defect.startsWith("a geometry")) {
            // pages of 3 MiB are no multiple of the 2 MiB granularity
            claim.put("pageBytes", 3L << 20);
        } else {
            claim.put("layers", 0);
        }
        AtomicReference<SimRank.DeviceState> before = new AtomicReference<>();
        rank.deploy()
                .compose(id -> rank.send(WorkerAction.CREATE_TENSORS, tensors(7, Layout.PAGE_MAJOR, 8)))
                .compose(created -> rank.send(WorkerAction.MAP, pages(7, "setup", 3)))
                .compose(mapped -> {
                    before.set(rank.state());
                    return rank.fails(WorkerAction.CREATE_TENSORS, claim);
                })
                .compose(refused -> {
                    assertThat(refused.failureCode()).isEqualTo(400);
                    assertThat(rank.state()).isEqualTo(before.get());
                    return rank.send(WorkerAction.STATS, new JsonObject());
                })
                .onComplete(test.succeeding(stats -> test.verify(() -> {
                    assertThat(stats.getJsonObject("groups").getJsonObject("7").getString("owner")).isEqualTo(OWNER);
                    test.completeNow();
                })));
    }
}
