package io.kvpager.cli.status;

import io.kvpager.LimitResult;
import io.kvpager.cache.CacheStats;
import io.kvpager.protocol.BusAddress;
import io.kvpager.protocol.CoordinatorReply;
import io.kvpager.protocol.CoordinatorRequest;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.eventbus.DeliveryOptions;
import io.vertx.core.eventbus.ReplyException;
import io.vertx.core.eventbus.ReplyFailure;
import io.vertx.core.json.JsonObject;
import java.util.ArrayList;
import java.util.List;

/**
 * Asks cache coordinators over the event bus at {@code kvpager.<instance>.coordinator}, the way
 * {@code status}, {@code top} and {@code limit} do: actions {@code stats} and {@code limit} in the
 * {@code action} header, bodies written and read by the protocol's records. An instance that is not there, or does not answer in time,
 * fails with a message that names it.
 */
public final class CoordinatorClient {

    private final Vertx vertx;
    private final long timeoutMs;

    public CoordinatorClient(Vertx vertx, long timeoutMs) {
        if (timeoutMs <= 0) {
            throw new IllegalArgumentException("a timeout must be positive, got " + timeoutMs + " ms");
        }
        this.vertx = vertx;
        this.timeoutMs = timeoutMs;
    }

    public static String address(String instance) {
        return BusAddress.coordinator(instance);
    }

    /**
     * The instance's stats; its coordinator counts a rank that has not answered within half the
     * timeout as down, so that a paused worker shows as a rank down (not ready) rather than its
     * coordinator as unreachable.
     */
    public Future<CacheStats> stats(String instance) {
        return ask(instance, new CoordinatorRequest.Stats(ranksWithinMs())).map(CacheStats::fromJson);
    }

    /** How long the coordinator may wait for its ranks: half the timeout, leaving it the rest to answer. */
    long ranksWithinMs() {
        return Math.max(1, timeoutMs / 2);
    }

    /**
     * A revisioned limit change, in bytes per rank; with no {@code revision}, the coordinator gives
     * it the next one (the one in force plus one), so that it applies.
     */
    public Future<LimitResult> limit(String instance, long bytes, Long revision) {
        return ask(instance, new CoordinatorRequest.Limit(bytes, revision)).map(json -> CoordinatorReply.Limit.fromJson(json).result());
    }

    /** The stats of each instance, or why it did not answer; never fails. */
    public Future<List<InstanceStatus>> status(List<String> instances) {
        List<Future<InstanceStatus>> answers = new ArrayList<>();
        for (String instance : instances) {
            answers.add(stats(instance).map(InstanceStatus::of)
                    .otherwise(e -> InstanceStatus.unreachable(instance, e.getMessage())));
        }
        return Future.join(answers).map(all -> answers.stream().map(Future::result).toList());
    }

    private Future<JsonObject> ask(String instance, CoordinatorRequest request) {
        String action = request.action().wireName();
        DeliveryOptions options = request.action().delivery().setSendTimeout(timeoutMs);
        return vertx.eventBus().request(address(instance), request.toJson(), options)
                .recover(e -> Future.failedFuture(explain(instance, e)))
                .compose(reply -> reply.body() instanceof JsonObject json ? Future.succeededFuture(json)
                        : Future.failedFuture(new IllegalStateException(instance + " answered '" + action + "' with "
                                + reply.body() + " instead of a JSON object")));
    }

    private Throwable explain(String instance, Throwable failure) {
        if (failure instanceof ReplyException reply) {
            if (reply.failureType() == ReplyFailure.NO_HANDLERS) {
                return new InstanceUnreachable(instance, "no coordinator for instance " + instance + " at " + address(instance));
            }
            if (reply.failureType() == ReplyFailure.TIMEOUT) {
                return new InstanceUnreachable(instance, "the coordinator of " + instance + " did not answer within " + timeoutMs + " ms");
            }
            return new IllegalStateException(instance + ": " + reply.getMessage() + " (code " + reply.failureCode() + ")");
        }
        return failure;
    }
}
