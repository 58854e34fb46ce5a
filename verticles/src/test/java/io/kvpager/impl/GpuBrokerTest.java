package io.kvpager.impl;

import io.vertx.core.Context;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.Vertx;
import io.vertx.junit5.VertxExtension;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import java.util.ArrayList;
import java.util.List;
import java.util.function.Supplier;

import static io.kvpager.SimPool.await;
import static io.kvpager.SimPool.failure;
import static org.assertj.core.api.Assertions.assertThat;

/** The memory broker of one GPU, on a Vert.x that is not clustered: the same shared data, local to the process. */
@ExtendWith(VertxExtension.class)
class GpuBrokerTest {

    /** Runs {@code work} on {@code context} and hands its result back to the test's thread. */
    private static <T> T on(Context context, Supplier<Future<T>> work) {
        Promise<T> promise = Promise.promise();
        context.runOnContext(v -> work.get().onComplete(promise));
        return await(promise.future());
    }

    @Test
    void takesWithinTheCapacityAndRefusesBeyondItWithoutCountingTheRefusal(Vertx vertx) {
        Context context = vertx.getOrCreateContext();
        GpuBroker broker = on(context, () -> GpuBroker.open(vertx, "gpu-a", 100));
        assertThat(on(context, () -> broker.take(60))).isTrue();
        assertThat(on(context, () -> broker.take(41))).isFalse();
        assertThat(on(context, broker::taken)).isEqualTo(60);
        assertThat(on(context, () -> broker.take(40))).isTrue();
        on(context, () -> broker.give(100));
        assertThat(on(context, broker::taken)).isZero();
    }

    @Test
    void aRefusalIsJudgedOnTheSharedCountNeverOnARememberedOne(Vertx vertx) {
        Context context = vertx.getOrCreateContext();
        GpuBroker first = on(context, () -> GpuBroker.open(vertx, "gpu-b", 100));
        GpuBroker second = on(context, () -> GpuBroker.open(vertx, "gpu-b", 100));
        assertThat(on(context, () -> second.take(90))).isTrue();
        // first still remembers 0 taken: it must not grant 20 on that memory
        assertThat(on(context, () -> first.take(20))).isFalse();
        assertThat(first.lastSeen()).isEqualTo(90);
        on(context, () -> second.give(50));
        // and it must not refuse on a memory of 90 either
        assertThat(on(context, () -> first.take(20))).isTrue();
        assertThat(on(context, first::taken)).isEqualTo(60);
    }

    @Test
    void brokersOnTwoEventLoopsNeverGrantMoreThanTheCapacity(Vertx vertx) {
        List<Context> contexts = List.of(vertx.getOrCreateContext(), vertx.getOrCreateContext());
        List<Future<Integer>> granted = new ArrayList<>();
        for (Context context : contexts) {
            Promise<Integer> count = Promise.promise();
            granted.add(count.future());
            context.runOnContext(v -> GpuBroker.open(vertx, "gpu-c", 150)
                    .compose(broker -> takeOneByOne(broker, 100, 0)).onComplete(count));
        }
        await(Future.all(granted));
        assertThat(granted.get(0).result() + granted.get(1).result()).isEqualTo(150);
        GpuBroker reader = on(contexts.get(0), () -> GpuBroker.open(vertx, "gpu-c", 150));
        assertThat(on(contexts.get(0), reader::taken)).isEqualTo(150);
    }

    private static Future<Integer> takeOneByOne(GpuBroker broker, int left, int granted) {
        if (left == 0) {
            return Future.succeededFuture(granted);
        }
        return broker.take(1).compose(ok -> takeOneByOne(broker, left - 1, granted + (ok ? 1 : 0)));
    }

    @Test
    void theFirstCapacityRegisteredHolds(Vertx vertx) {
        Context context = vertx.getOrCreateContext();
        on(context, () -> GpuBroker.open(vertx, "gpu-d", 100));
        GpuBroker later = on(context, () -> GpuBroker.open(vertx, "gpu-d", 200));
        assertThat(later.capacityBytes()).isEqualTo(100);
    }

    @Test
    void refusesBadArguments(Vertx vertx) {
        Context context = vertx.getOrCreateContext();
        assertThat(failure(GpuBroker.open(vertx, " ", 100))).isInstanceOf(IllegalArgumentException.class);
        assertThat(failure(GpuBroker.open(vertx, "gpu-e", 0))).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("capacity of at least 1 byte");
        GpuBroker broker = on(context, () -> GpuBroker.open(vertx, "gpu-e", 100));
        Promise<Throwable> refused = Promise.promise();
        context.runOnContext(v -> broker.take(0).onComplete(ar -> refused.complete(ar.cause())));
        assertThat(await(refused.future())).isInstanceOf(IllegalArgumentException.class).hasMessageContaining("positive");
        assertThat(on(context, broker::taken)).isZero();
    }
}
