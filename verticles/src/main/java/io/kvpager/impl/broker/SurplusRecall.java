package io.kvpager.impl.broker;

import io.kvpager.protocol.Owner;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.eventbus.DeliveryOptions;
import io.vertx.core.eventbus.MessageConsumer;
import io.vertx.core.json.JsonObject;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.function.Function;

/**
 * Asks the other pools on a GPU to give back the part of their lease they do not hold, before a
 * take is refused for want of room: a lease's surplus must never cost another pool its memory. Each
 * pool answers at {@code kvpager.gpu-lease.<owner>.<pool>} with the bytes it gave back, once its
 * broker has them; a pool that does not answer within {@value #ANSWER_MS} ms keeps its surplus until
 * it is idle.
 */
final class SurplusRecall {

    /** How long a recall waits for the other pools' answers. */
    static final long ANSWER_MS = 1_000;

    private SurplusRecall() {
    }

    static String address(Owner owner, String pool) {
        return "kvpager.gpu-lease." + owner + "." + pool;
    }

    /** Answers recalls of {@code pool}'s surplus: {@code yieldOn} gives back its surplus on the named GPU. */
    static MessageConsumer<JsonObject> answer(Vertx vertx, Owner owner, String pool, Function<String, Future<Long>> yieldOn) {
        return vertx.eventBus().<JsonObject>consumer(address(owner, pool), message -> {
            String gpu = message.body() == null ? null : message.body().getString("gpu");
            yieldOn.apply(gpu).onComplete(ar -> message.reply(new JsonObject()
                    .put("returnedBytes", ar.succeeded() ? ar.result() : 0L)));
        });
    }

    /** Asks every pool but {@code pool} that holds a share of {@code gpu} in {@code shares} to give its surplus back. */
    static Future<Void> ask(Vertx vertx, String gpu, GpuShares shares, String pool) {
        List<Future<?>> answers = new ArrayList<>();
        DeliveryOptions delivery = new DeliveryOptions().setSendTimeout(ANSWER_MS);
        for (Map.Entry<String, GpuShares.Share> other : shares.shares().entrySet()) {
            if (!other.getKey().equals(pool) && other.getValue().bytes() > 0) {
                answers.add(vertx.eventBus().request(address(other.getValue().owner(), other.getKey()),
                        new JsonObject().put("gpu", gpu), delivery));
            }
        }
        return Future.join(answers).transform(all -> Future.succeededFuture());
    }
}
