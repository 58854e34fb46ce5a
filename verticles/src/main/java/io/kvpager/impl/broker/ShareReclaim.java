package io.kvpager.impl.broker;

import io.kvpager.protocol.Owner;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.eventbus.DeliveryOptions;
import io.vertx.core.eventbus.MessageConsumer;
import io.vertx.core.json.JsonObject;

import java.util.function.Function;

/**
 * The messages of a reclaim between the pools of a GPU, in whatever process each runs: a pool
 * below its guarantee asks a pool above its own to give back bytes
 * ({@code {"gpu", "bytes", "reason"}}, answered with {@code {"givenBytes", "blocks", "deadlineMs"}}:
 * what it gave back at once, the blocks it asked its engine to free, and by when), and tells it
 * when it is capped for missing that deadline ({@code {"gpu", "capped": true}}, no answer). Each pool
 * listens at {@code kvpager.gpu-reclaim.<owner>.<pool>}; an ask unanswered within {@value #ANSWER_MS}
 * ms fails, and the pool asked is judged at the asker's deadline all the same.
 */
final class ShareReclaim {

    /** How long an ask waits for its answer. */
    static final long ANSWER_MS = 1_000;

    private ShareReclaim() {
    }

    static String address(Owner owner, String pool) {
        return "kvpager.gpu-reclaim." + owner + "." + pool;
    }

    /** One ask of a pool: give back {@code bytes} of {@code gpu}, because of {@code reason}. */
    record Ask(String gpu, long bytes, String reason) {
    }

    /** What the pool asked answered. */
    record Answer(long givenBytes, long blocks, long deadlineMs) {
        JsonObject toJson() {
            return new JsonObject().put("givenBytes", givenBytes).put("blocks", blocks).put("deadlineMs", deadlineMs);
        }

        static Answer fromJson(JsonObject json) {
            return new Answer(json.getLong("givenBytes", 0L), json.getLong("blocks", 0L), json.getLong("deadlineMs", 0L));
        }
    }

    /**
     * Answers the asks to {@code pool}: {@code asked} carries one out; {@code capped} hears that the
     * pool was capped on the named GPU.
     */
    static MessageConsumer<JsonObject> answer(Vertx vertx, Owner owner, String pool, Function<Ask, Future<Answer>> asked,
                                              java.util.function.Consumer<String> capped) {
        return vertx.eventBus().<JsonObject>consumer(address(owner, pool), message -> {
            JsonObject body = message.body();
            if (body == null || body.getString("gpu") == null) {
                message.fail(400, "a reclaim names its GPU");
                return;
            }
            if (body.getBoolean("capped", false)) {
                capped.accept(body.getString("gpu"));
                return;
            }
            Long bytes = body.getLong("bytes");
            if (bytes == null || bytes < 1) {
                message.fail(400, "a reclaim asks for 1 byte or more, got " + bytes);
                return;
            }
            asked.apply(new Ask(body.getString("gpu"), bytes, body.getString("reason", ""))).onComplete(ar -> {
                if (ar.succeeded()) {
                    message.reply(ar.result().toJson());
                } else {
                    message.fail(500, String.valueOf(ar.cause().getMessage()));
                }
            });
        });
    }

    /** Asks {@code pool} (of {@code owner}) to give back {@code bytes} of {@code gpu}. */
    static Future<Answer> ask(Vertx vertx, Owner owner, String pool, String gpu, long bytes, String reason) {
        return vertx.eventBus().<JsonObject>request(address(owner, pool), new JsonObject().put("gpu", gpu).put("bytes", bytes)
                        .put("reason", reason), new DeliveryOptions().setSendTimeout(ANSWER_MS))
                .map(reply -> Answer.fromJson(reply.body()));
    }

    /** Tells {@code pool} (of {@code owner}) that it is capped on {@code gpu}. */
    static void capped(Vertx vertx, Owner owner, String pool, String gpu) {
        vertx.eventBus().send(address(owner, pool), new JsonObject().put("gpu", gpu).put("capped", true));
    }
}
