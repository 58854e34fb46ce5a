package io.kvpager.impl.coordinator;

import io.kvpager.protocol.PoolRanks;
import io.kvpager.protocol.WorkerProtocol;
import io.kvpager.Allocation;
import io.kvpager.FailureCode;
import io.kvpager.LimitResult;
import io.kvpager.cache.KvPagerException;
import io.kvpager.protocol.WireText;
import io.vertx.core.Future;
import io.vertx.core.Handler;
import io.vertx.core.eventbus.Message;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;

import java.util.List;
import java.util.function.Supplier;

/**
 * The coordinator's event-bus face at {@code kvpager.<instance>.coordinator}, for remote control:
 * the action travels in the {@code action} header, bodies are JSON objects.
 *
 * <table>
 * <caption>actions</caption>
 * <tr><th>action</th><th>body</th><th>reply</th></tr>
 * <tr><td>{@code pool}</td><td>{@code {}}</td><td>{@code {instance, stages, tp, group}}: which pool this coordinator serves</td></tr>
 * <tr><td>{@code stats}</td><td>{@code {}}</td><td>{@link io.kvpager.cache.CacheStats#toJson()}</td></tr>
 * <tr><td>{@code alloc}</td><td>{@code {blocks: int}}</td><td>{@code {blocks: [ids]}} or {@code {miss: reason, detail}}</td></tr>
 * <tr><td>{@code free}</td><td>{@code {blocks: [ids]}}</td><td>{@code {}}</td></tr>
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

    static final List<String> ACTIONS = List.of("pool", "stats", "alloc", "free", "fence", "retired", "available", "limit", "trim");

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
            answer = dispatch(message.headers().get(WorkerProtocol.ACTION_HEADER), body(message.body()));
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
        if (action == null) {
            throw new IllegalArgumentException("the action header is missing; actions: " + String.join(", ", ACTIONS));
        }
        Coordinator coordinator = incarnation.get();
        return switch (action) {
            case "pool" -> Future.succeededFuture(poolJson(coordinator.pool()));
            case "stats" -> coordinator.stats().map(s -> s.toJson());
            case "alloc" -> coordinator.alloc(integer(body, "blocks")).map(CoordinatorEndpoint::allocationJson);
            case "free" -> coordinator.free(intArray(body, "blocks")).map(v -> new JsonObject());
            case "fence" -> {
                long id = coordinator.nextFenceId();
                coordinator.openFence(id);
                yield Future.succeededFuture(new JsonObject().put("fence", id));
            }
            case "retired" -> coordinator.retired(longValue(body, "fence")).map(v -> new JsonObject());
            case "available" -> coordinator.availableBlocks().map(n -> new JsonObject().put("blocks", n));
            // without a revision, the next one: a change that always applies
            case "limit" -> (body.containsKey("revision") ? coordinator.setMemoryLimit(longValue(body, "bytes"), longValue(body, "revision"))
                    : coordinator.setMemoryLimit(longValue(body, "bytes"))).map(CoordinatorEndpoint::limitJson);
            case "trim" -> coordinator.trim().map(v -> new JsonObject());
            default -> throw new IllegalArgumentException("unknown action '" + WireText.cut(action) + "'; actions: " + String.join(", ", ACTIONS));
        };
    }

    static JsonObject poolJson(PoolRanks pool) {
        return new JsonObject().put("instance", pool.instance()).put("stages", new JsonArray(new java.util.ArrayList<>(pool.stages())))
                .put("tp", pool.tp()).put("group", pool.group());
    }

    static JsonObject allocationJson(Allocation a) {
        if (a.isMiss()) {
            return new JsonObject().put("miss", a.missReason().name()).put("detail", a.detail());
        }
        JsonArray blocks = new JsonArray();
        for (int i = 0; i < a.size(); i++) {
            blocks.add(a.block(i));
        }
        return new JsonObject().put("blocks", blocks);
    }

    static JsonObject limitJson(LimitResult r) {
        return new JsonObject().put("outcome", r.outcome().name()).put("revision", r.revision())
                .put("limitBytes", r.limitBytes()).put("effectivePages", r.effectivePages()).put("inUsePages", r.inUsePages());
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

    private static int integer(JsonObject body, String key) {
        Object value = body.getValue(key);
        if (!(value instanceof Integer || value instanceof Long) || ((Number) value).longValue() != ((Number) value).intValue()) {
            throw new IllegalArgumentException(key + " must be an integer, got " + shown(value));
        }
        return ((Number) value).intValue();
    }

    private static long longValue(JsonObject body, String key) {
        Object value = body.getValue(key);
        if (!(value instanceof Integer || value instanceof Long)) {
            throw new IllegalArgumentException(key + " must be an integer, got " + shown(value));
        }
        return ((Number) value).longValue();
    }

    private static int[] intArray(JsonObject body, String key) {
        Object value = body.getValue(key);
        if (!(value instanceof JsonArray array)) {
            throw new IllegalArgumentException(key + " must be a list of block ids, got " + shown(value));
        }
        int[] out = new int[array.size()];
        for (int i = 0; i < out.length; i++) {
            Object item = array.getValue(i);
            if (!(item instanceof Integer || item instanceof Long) || ((Number) item).longValue() != ((Number) item).intValue()) {
                throw new IllegalArgumentException(key + "[" + i + "] must be a block id, got " + shown(item));
            }
            out[i] = ((Number) item).intValue();
        }
        return out;
    }

    private static String shown(Object value) {
        return value == null ? "nothing" : value instanceof String s ? "'" + s + "'" : String.valueOf(value);
    }
}
