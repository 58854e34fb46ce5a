package io.kvpager.protocol;

import io.kvpager.Allocation;
import io.kvpager.LimitResult;
import io.kvpager.MissReason;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;

import java.util.ArrayList;
import java.util.List;

/**
 * A coordinator's reply, one record per {@link CoordinatorAction} that answers with fields
 * ({@code stats} answers with {@link io.kvpager.cache.CacheStats#toJson()}; {@code free},
 * {@code retired} and {@code trim} with {@link Done}): what the coordinator writes with
 * {@link #toJson()} and a client reads back with the record's {@code fromJson}, strictly, so that a
 * peer of another version is reported as such rather than read as zeros.
 */
public sealed interface CoordinatorReply {

    JsonObject toJson();

    /** The reply with no fields. */
    record Done() implements CoordinatorReply {
        @Override
        public JsonObject toJson() {
            return new JsonObject();
        }
    }

    /** {@code pool}: the pool this coordinator serves. */
    record Pool(String instance, List<Integer> stages, int tp, int group) implements CoordinatorReply {
        public Pool {
            stages = List.copyOf(stages);
        }

        @Override
        public JsonObject toJson() {
            return new JsonObject().put("instance", instance).put("stages", new JsonArray(new ArrayList<>(stages)))
                    .put("tp", tp).put("group", group);
        }

        public static Pool fromJson(JsonObject json) {
            RequestBody body = new RequestBody(json);
            int[] stages = body.requireInts("stages", 0, Integer.MAX_VALUE);
            List<Integer> list = new ArrayList<>(stages.length);
            for (int stage : stages) {
                list.add(stage);
            }
            return new Pool(body.requireText("instance"), list, body.requireInt("tp", 1, Integer.MAX_VALUE),
                    body.requireInt("group", 0, Integer.MAX_VALUE));
        }
    }

    /** {@code alloc}: the blocks, {@code {blocks: [ids]}}, or a miss, {@code {miss: reason, detail}}. */
    record Alloc(Allocation allocation) implements CoordinatorReply {
        @Override
        public JsonObject toJson() {
            if (allocation.isMiss()) {
                return new JsonObject().put("miss", allocation.missReason().name()).put("detail", allocation.detail());
            }
            JsonObject answer = new JsonObject().put(CoordinatorRequest.BLOCKS, RequestFields.pageArray(allocation.blocks()));
            // the incarnation that handed the blocks out: a free that names it is refused by any later one
            return allocation.incarnation() == null ? answer : answer.put(CoordinatorRequest.OWNER, allocation.incarnation());
        }

        public static Alloc fromJson(JsonObject json) {
            RequestBody body = new RequestBody(json);
            if (json.getValue("miss") != null) {
                MissReason reason = body.requireEnum("miss", MissReason.class);
                String detail = body.requireText("detail");
                // a GPU_SHARE miss says so by its flag too, as the coordinator's own did
                Allocation miss = reason == MissReason.GPU_SHARE ? Allocation.gpuShareMiss(detail) : Allocation.miss(reason, detail);
                return new Alloc(miss);
            }
            Allocation served = Allocation.of(body.requireInts(CoordinatorRequest.BLOCKS, 0, Integer.MAX_VALUE));
            String owner = body.optionalString(CoordinatorRequest.OWNER);
            return new Alloc(owner == null ? served : served.withIncarnation(owner));
        }
    }

    /** {@code fence}: the id of the fence just opened. */
    record Fence(long fence) implements CoordinatorReply {
        @Override
        public JsonObject toJson() {
            return new JsonObject().put(CoordinatorRequest.FENCE, fence);
        }

        public static Fence fromJson(JsonObject json) {
            return new Fence(new RequestBody(json).requireLong(CoordinatorRequest.FENCE, Long.MIN_VALUE, Long.MAX_VALUE));
        }
    }

    /** {@code available}: how many blocks an alloc could take now. */
    record Available(int blocks) implements CoordinatorReply {
        @Override
        public JsonObject toJson() {
            return new JsonObject().put(CoordinatorRequest.BLOCKS, blocks);
        }

        public static Available fromJson(JsonObject json) {
            return new Available(new RequestBody(json).requireInt(CoordinatorRequest.BLOCKS, 0, Integer.MAX_VALUE));
        }
    }

    /** {@code limit}: the outcome of a revisioned limit change. */
    record Limit(LimitResult result) implements CoordinatorReply {
        @Override
        public JsonObject toJson() {
            return new JsonObject().put("outcome", result.outcome().name()).put("revision", result.revision())
                    .put("limitBytes", result.limitBytes()).put("effectivePages", result.effectivePages())
                    .put("inUsePages", result.inUsePages());
        }

        public static Limit fromJson(JsonObject json) {
            RequestBody body = new RequestBody(json);
            return new Limit(new LimitResult(body.requireEnum("outcome", LimitResult.Outcome.class),
                    body.requireLong("revision", Long.MIN_VALUE, Long.MAX_VALUE),
                    body.requireLong("limitBytes", Long.MIN_VALUE, Long.MAX_VALUE),
                    body.requireInt("effectivePages", Integer.MIN_VALUE, Integer.MAX_VALUE),
                    body.requireInt("inUsePages", Integer.MIN_VALUE, Integer.MAX_VALUE)));
        }
    }
}
