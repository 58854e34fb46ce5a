package io.kvpager.impl.broker;

import io.kvpager.protocol.Owner;
import io.vertx.core.Context;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.Vertx;
import io.vertx.junit5.VertxExtension;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Supplier;

import static io.kvpager.cache.SimPool.await;
import static io.kvpager.cache.SimPool.failure;
import static org.assertj.core.api.Assertions.assertThat;

/** The memory broker of one GPU, on a Vert.x that is not clustered: the same shared data, local to the process. */
@ExtendWith(VertxExtension.class)
class GpuBrokerTest {

    private static final Owner ALICE = new Owner("node-a", 1);
    private static final Owner ALICE_AGAIN = new Owner("node-a", 2);
    private static final Owner BOB = new Owner("node-b", 1);
    private static final Owner CAROL = new Owner("node-c", 1);

    /** Runs {@code work} on {@code context} and hands its result back to the test's thread. */
    static <T> T on(Context context, Supplier<Future<T>> work) {
        Promise<T> promise = Promise.promise();
        context.runOnContext(v -> work.get().onComplete(promise));
        return await(promise.future());
    }

    @Test
    void leasesWithinTheCapacityAndRefusesBeyondItWithoutCountingTheRefusal(Vertx vertx) {
        Context context = vertx.getOrCreateContext();
        GpuBroker broker = on(context, () -> GpuBroker.open(vertx, "gpu-a", 100));
        assertThat(on(context, () -> broker.lease("p", ALICE, 60, 60))).isEqualTo(60);
        assertThat(on(context, () -> broker.lease("q", BOB, 41, 41))).isEqualTo(-1);
        assertThat(on(context, broker::taken)).isEqualTo(60);
        assertThat(on(context, () -> broker.lease("q", BOB, 40, 40))).isEqualTo(40);
        assertThat(on(context, () -> broker.release("p", ALICE))).isEqualTo(60);
        assertThat(on(context, () -> broker.release("q", BOB))).isEqualTo(40);
        assertThat(on(context, broker::taken)).isZero();
    }

    @Test
    void aLeaseTakesAtMostHalfOfWhatItWouldLeaveFreeAboveWhatItNeeds(Vertx vertx) {
        Context context = vertx.getOrCreateContext();
        GpuBroker broker = on(context, () -> GpuBroker.open(vertx, "gpu-half", 100));
        // 10 needed, up to 50 wanted: 90 would be left free, so all 40 above the need fit
        assertThat(on(context, () -> broker.lease("p", ALICE, 10, 50))).isEqualTo(50);
        // 30 more needed (80 in all) leaves 20 free, of which the lease takes half
        assertThat(on(context, () -> broker.lease("p", ALICE, 80, 100))).isEqualTo(90);
        // shrinking is a lease of exactly that much
        assertThat(on(context, () -> broker.lease("p", ALICE, 5, 5))).isEqualTo(5);
        assertThat(on(context, broker::taken)).isEqualTo(5);
    }

    @Test
    void aRefusalIsJudgedOnTheSharedSharesNeverOnRememberedOnes(Vertx vertx) {
        Context context = vertx.getOrCreateContext();
        GpuBroker first = on(context, () -> GpuBroker.open(vertx, "gpu-b", 100));
        GpuBroker second = on(context, () -> GpuBroker.open(vertx, "gpu-b", 100));
        assertThat(on(context, () -> second.lease("q", BOB, 90, 90))).isEqualTo(90);
        // first still remembers nothing taken: it must not grant 20 on that memory
        assertThat(on(context, () -> first.lease("p", ALICE, 20, 20))).isEqualTo(-1);
        assertThat(first.lastSeen().total()).isEqualTo(90);
        on(context, () -> second.lease("q", BOB, 40, 40));
        // and it must not refuse on a memory of 90 either
        assertThat(on(context, () -> first.lease("p", ALICE, 20, 20))).isEqualTo(20);
        assertThat(on(context, first::taken)).isEqualTo(60);
    }

    @Test
    void brokersOnTwoEventLoopsNeverGrantMoreThanTheCapacity(Vertx vertx) {
        List<Context> contexts = List.of(vertx.getOrCreateContext(), vertx.getOrCreateContext());
        List<Future<Long>> granted = new ArrayList<>();
        for (int i = 0; i < contexts.size(); i++) {
            Promise<Long> share = Promise.promise();
            granted.add(share.future());
            Owner owner = new Owner("node-" + i, 1);
            contexts.get(i).runOnContext(v -> GpuBroker.open(vertx, "gpu-c", 150)
                    .compose(broker -> leaseOneByOne(broker, "pool-" + owner.nodeId(), owner, 100, 0)).onComplete(share));
        }
        await(Future.all(granted));
        assertThat(granted.get(0).result() + granted.get(1).result()).isEqualTo(150);
        GpuBroker reader = on(contexts.get(0), () -> GpuBroker.open(vertx, "gpu-c", 150));
        assertThat(on(contexts.get(0), reader::taken)).isEqualTo(150);
    }

    private static Future<Long> leaseOneByOne(GpuBroker broker, String pool, Owner owner, int left, long share) {
        if (left == 0) {
            return Future.succeededFuture(share);
        }
        return broker.lease(pool, owner, share + 1, share + 1)
                .compose(got -> leaseOneByOne(broker, pool, owner, left - 1, got < 0 ? share : got));
    }

    @Test
    void aNewOwnerOfAPoolReplacesTheOldOwnersShareAndTheOldOneCanNeitherGrowNorGiveIt(Vertx vertx) {
        Context context = vertx.getOrCreateContext();
        GpuBroker old = on(context, () -> GpuBroker.open(vertx, "gpu-replace", 100));
        GpuBroker restarted = on(context, () -> GpuBroker.open(vertx, "gpu-replace", 100));
        on(context, () -> old.lease("llama.group0", ALICE, 70, 70));
        on(context, () -> old.lease("other", BOB, 20, 20));
        // the pool's new owner has reclaimed its memory: its 10 replace the 70, not add to them
        assertThat(on(context, () -> restarted.claim("llama.group0", ALICE_AGAIN, 10))).isTrue();
        GpuShares shares = on(context, restarted::shares);
        assertThat(shares.of("llama.group0")).isEqualTo(new GpuShares.Share(ALICE_AGAIN, 10));
        assertThat(shares.total()).isEqualTo(30);

        assertThat(failure(onFailing(context, () -> old.lease("llama.group0", ALICE, 80, 80))))
                .isInstanceOf(GpuBroker.ShareTakenOver.class).hasMessageContaining("belongs to owner node-a#2 now, not to node-a#1");
        assertThat(on(context, () -> old.release("llama.group0", ALICE))).isZero();
        assertThat(on(context, restarted::taken)).isEqualTo(30);
        // a claim is judged like any take: 71 do not fit beside the other 20
        assertThat(on(context, () -> restarted.claim("llama.group0", ALICE_AGAIN, 81))).isFalse();
        assertThat(on(context, restarted::taken)).isEqualTo(30);
    }

    @Test
    void theSharesOfADepartedNodeAreRemovedExactlyOnceHoweverManySurvivorsRemoveThem(Vertx vertx) {
        Context context = vertx.getOrCreateContext();
        GpuBroker gpu1 = on(context, () -> GpuBroker.open(vertx, "gpu-departed-1", 100));
        GpuBroker gpu2 = on(context, () -> GpuBroker.open(vertx, "gpu-departed-2", 100));
        on(context, () -> gpu1.lease("a1", ALICE, 30, 30));
        on(context, () -> gpu1.lease("a2", ALICE_AGAIN, 15, 15));
        on(context, () -> gpu1.lease("b", BOB, 20, 20));
        on(context, () -> gpu2.lease("a1", ALICE, 40, 40));
        on(context, () -> gpu2.lease("c", CAROL, 5, 5));

        // three survivors notice node-a leave at once, each on its own event loop
        List<Future<Long>> removals = new ArrayList<>();
        for (int survivor = 0; survivor < 3; survivor++) {
            Promise<Long> removed = Promise.promise();
            removals.add(removed.future());
            vertx.getOrCreateContext().runOnContext(v -> DepartedShares.removeNode(vertx, "node-a", Set::of).onComplete(removed));
        }
        await(Future.all(removals));
        assertThat(removals.stream().mapToLong(Future::result).sum()).as("bytes removed by all survivors").isEqualTo(30 + 15 + 40);
        assertThat(on(context, gpu1::shares).shares()).containsOnlyKeys("b");
        assertThat(on(context, gpu1::taken)).isEqualTo(20);
        assertThat(on(context, gpu2::shares).shares()).containsOnlyKeys("c");
        assertThat(on(context, gpu2::taken)).isEqualTo(5);
        // after the departure, the whole rest of the GPU can be taken again
        assertThat(on(context, () -> gpu1.lease("d", CAROL, 80, 80))).isEqualTo(80);
    }

    @Test
    void aNoticeOfALeaveThatComesOnceTheNodeIsBackRemovesNoShareOfIt(Vertx vertx) {
        Context context = vertx.getOrCreateContext();
        GpuBroker gpu = on(context, () -> GpuBroker.open(vertx, "gpu-late-notice", 100));
        on(context, () -> gpu.lease("a1", ALICE, 30, 30));
        on(context, () -> gpu.lease("b", BOB, 20, 20));

        // node-a left and merged back before this node's notice of the leave was handled: it keeps its share
        Set<String> members = ConcurrentHashMap.newKeySet();
        members.addAll(Set.of("node-a", BOB.nodeId()));
        assertThat(on(context, () -> DepartedShares.removeNode(vertx, "node-a", () -> Set.copyOf(members)))).isZero();
        assertThat(on(context, gpu::shares).shares()).containsOnlyKeys("a1", "b");
        assertThat(on(context, gpu::taken)).isEqualTo(50);

        // gone for good when the record is read: removed
        members.remove("node-a");
        assertThat(on(context, () -> DepartedShares.removeNode(vertx, "node-a", () -> Set.copyOf(members)))).isEqualTo(30);
        assertThat(on(context, gpu::shares).shares()).containsOnlyKeys("b");
        assertThat(on(context, gpu::taken)).isEqualTo(20);
    }

    @Test
    void theFirstCapacityRegisteredHolds(Vertx vertx) {
        Context context = vertx.getOrCreateContext();
        on(context, () -> GpuBroker.open(vertx, "gpu-d", 100));
        GpuBroker later = on(context, () -> GpuBroker.open(vertx, "gpu-d", 200));
        assertThat(later.capacityBytes()).isEqualTo(100);
    }

    @Test
    void refusesBadArgumentsAndChangesNothing(Vertx vertx) {
        Context context = vertx.getOrCreateContext();
        assertThat(failure(GpuBroker.open(vertx, " ", 100))).isInstanceOf(IllegalArgumentException.class);
        assertThat(failure(GpuBroker.open(vertx, "gpu-e", 0))).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("capacity of at least 1 byte");
        GpuBroker broker = on(context, () -> GpuBroker.open(vertx, "gpu-e", 100));
        assertThat(failure(onFailing(context, () -> broker.lease("p", ALICE, -1, 5)))).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("-1 bytes");
        assertThat(failure(onFailing(context, () -> broker.lease("p", ALICE, 10, 5)))).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("below its least");
        assertThat(failure(onFailing(context, () -> broker.claim("p", ALICE, -3)))).isInstanceOf(IllegalArgumentException.class);
        assertThat(on(context, broker::taken)).isZero();
    }

    @Test
    void sharesThatDoNotReadFailClearly() {
        assertThat(GpuShares.parse(null)).isEqualTo(GpuShares.NONE);
        org.assertj.core.api.Assertions.assertThatThrownBy(() -> GpuShares.parse("{\"p\":{\"owner\":\"no-epoch\",\"bytes\":1}}"))
                .isInstanceOf(IllegalStateException.class).hasMessageContaining("do not read");
        GpuShares shares = GpuShares.NONE.with("p", ALICE, 7).with("q", BOB, 3);
        assertThat(GpuShares.parse(shares.encode())).isEqualTo(shares);
    }

    /** Runs {@code work} on {@code context}; the future it gives, for {@code failure} to read. */
    private static <T> Future<T> onFailing(Context context, Supplier<Future<T>> work) {
        Promise<T> promise = Promise.promise();
        context.runOnContext(v -> work.get().onComplete(promise));
        return promise.future();
    }
}
