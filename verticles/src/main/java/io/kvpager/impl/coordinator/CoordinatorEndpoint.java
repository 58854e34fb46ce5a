package io.kvpager.impl.coordinator;

import io.kvpager.protocol.PoolRanks;
import io.kvpager.protocol.WorkerProtocol;
import io.kvpager.Allocation;
import io.kvpager.FailureCode;
import io.kvpager.cache.KvPagerException;
import io.kvpager.protocol.CoordinatorAction;
import io.kvpager.protocol.CoordinatorReply;
import io.kvpager.protocol.CoordinatorRequest;
import io.kvpager.protocol.WireText;
import io.vertx.core.Future;
import io.vertx.core.Handler;
import io.vertx.core.eventbus.Message;
import io.vertx.core.json.JsonObject;

import java.util.function.Supplier;

/**
 * The coordinator's event-bus face at {@code kvpager.<instance>.coordinator}, for remote control:
 * the action travels in the {@code action} header, bodies are JSON objects, each read and written
 * by its record ({@link CoordinatorRequest}, {@link CoordinatorReply}).
 *
 * <table>
 * <caption>actions</caption>
 * <tr><th>action</th><th>body</th><th>reply</th></tr>
 * <tr><td>{@code pool}</td><td>{@code {}}</td><td>{@code {instance, stages, tp, group}}: which pool this coordinator serves</td></tr>
 * <tr><td>{@code stats}</td><td>{@code {}}</td><td>{@link io.kvpager.cache.CacheStats#toJson()}</td></tr>
 * <tr><td>{@code alloc}</td><td>{@code {blocks: int, near?: int}}: {@code near} a block held, whose page is filled first</td><td>{@code {blocks: [ids], owner}} or {@code {miss: reason, detail}}</td></tr>
 * <tr><td>{@code free}</td><td>{@code {blocks: [ids], owner?}}: {@code owner} as the alloc answered it</td><td>{@code {}}; 410 when another owner handed them out</td></tr>
 * <tr><td>{@code fence}</td><td>{@code {}}</td><td>{@code {fence: id}}</td></tr>
 * <tr><td>{@code retired}</td><td>{@code {fence: id}}</td><td>{@code {}}</td></tr>
 * <tr><td>{@code available}</td><td>{@code {}}</td><td>{@code {blocks: int}}</td></tr>
 * <tr><td>{@code limit}</td><td>{@code {bytes: long, revision: long}}, or without {@code revision} for the next one</td><td>{@code {outcome, revision, limitBytes, effectivePages, inUsePages}}</td></tr>
 * <tr><td>{@code trim}</td><td>{@code {}}</td><td>{@code {}}</td></tr>
 * </table>
 *
 * <p>A missing or mistyped field, an unknown action or a refused argument fails with 400 and a
 * message naming it; a rank failure with the {@link KvPagerException}'s code (507, 500, ...; -1 for
 * a timeout, -2 for a missing rank); a closed cache with 503.
 */
public final class CoordinatorEndpoint implements Handler<Message<Object>> {

    private final Supplier<Coordinator> incarnation;

    /** @param incarnation the coordinator that serves now: a displaced one is replaced by a new incarnation */
    public CoordinatorEndpoint(Supplier<Coordinator> incarnation) {
        this.incarnation = incarnation;
    }

    public CoordinatorEndpoint(Coordinator coordinator) {
        this(() -> coordinator);
    }

    @Override
    public void handle(Message<Object> message) {
        Future<JsonObject> answer;
        try {
            answer = dispatch(message.headers().get(CoordinatorAction.HEADER), body(message.body()));
        } catch (IllegalArgumentException e) {
            answer = Future.failedFuture(e);
        }
        answer.onComplete(ar -> {
            if (ar.succeeded()) {
                message.reply(ar.result());
            } else {
                Throwable e = ar.cause();
                int code = e instanceof IllegalArgumentException ? FailureCode.BAD_REQUEST.code()
                        : e instanceof KvPagerException k ? k.code().code() : FailureCode.DRIVER_ERROR.code();
                message.fail(code, String.valueOf(e.getMessage()));
            }
        });
    }

    private Future<JsonObject> dispatch(String action, JsonObject body) {
        CoordinatorRequest request = CoordinatorRequest.fromJson(CoordinatorAction.of(action), body);
        Coordinator coordinator = incarnation.get();
        return switch (request) {
            case CoordinatorRequest.Pool p -> Future.succeededFuture(poolReply(coordinator.pool()).toJson());
            case CoordinatorRequest.Stats s -> coordinator.stats(s.ranksWithinMs()).map(stats -> stats.toJson());
            case CoordinatorRequest.Alloc alloc -> coordinator.alloc(alloc.blocks(), alloc.near()).map(a -> new CoordinatorReply.Alloc(a).toJson());
            case CoordinatorRequest.Free free -> coordinator.free(free.blocks(), free.owner()).map(CoordinatorEndpoint::done);
            case CoordinatorRequest.Fence f -> Future.succeededFuture(new CoordinatorReply.Fence(coordinator.fence()).toJson());
            case CoordinatorRequest.Retired retired -> coordinator.retired(retired.fence()).map(CoordinatorEndpoint::done);
            case CoordinatorRequest.Available a -> coordinator.availableBlocks().map(n -> new CoordinatorReply.Available(n).toJson());
            case CoordinatorRequest.Limit limit -> (limit.revision() == null ? coordinator.setMemoryLimit(limit.bytes())
                    : coordinator.setMemoryLimit(limit.bytes(), limit.revision())).map(r -> new CoordinatorReply.Limit(r).toJson());
            case CoordinatorRequest.Trim t -> coordinator.trim().map(CoordinatorEndpoint::done);
        };
    }

    static CoordinatorReply.Pool poolReply(PoolRanks pool) {
        return new CoordinatorReply.Pool(pool.instance(), pool.stages(), pool.tp(), pool.group());
    }

    private static JsonObject done(Object nothing) {
        return new CoordinatorReply.Done().toJson();
    }

    private static JsonObject body(Object body) {
        if (body == null) {
            return new JsonObject();
        }
        if (body instanceof JsonObject json) {
            return json;
        }
        throw new IllegalArgumentException("the body must be a JSON object, got a " + body.getClass().getSimpleName());
    }
}
