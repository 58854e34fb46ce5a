package io.kvpager.protocol;

import io.kvpager.FailureCode;
import io.kvpager.cache.RankFailure;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Combinators;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.constraints.IntRange;
import net.jqwik.api.constraints.Size;
import net.jqwik.api.constraints.UniqueElements;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.function.Function;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** Every request and reply record reads back what it writes, and refuses what it does not write. */
class ProtocolRecordsTest {

    private static final int GROUP_PAGES = 256;

    @ParameterizedTest
    @EnumSource(WorkerAction.class)
    void everyRequestReadsBackWhatItWrites(WorkerAction action) {
        JsonObject json = ProtocolExamples.request(action);
        assertThat(writeRequest(action, readRequest(action, json))).isEqualTo(json);
    }

    @ParameterizedTest
    @EnumSource(WorkerAction.class)
    void everyReplyReadsBackWhatItWrites(WorkerAction action) {
        JsonObject json = ProtocolExamples.reply(action);
        assertThat(writeReply(action, readReply(action, json))).isEqualTo(json);
    }

    @ParameterizedTest
    @EnumSource(WorkerAction.class)
    void everyFailureReadsBackWhatItWrites(WorkerAction action) {
        RankFailure failure = ProtocolExamples.failure(action);
        assertThat(RankFailureJson.fromJson(RankFailureJson.toJson(failure))).isEqualTo(failure);
    }

    @Property
    void pagesRequestsRoundTrip(@ForAll("pagesActions") WorkerAction action,
                                @ForAll @UniqueElements @Size(max = 64) List<@IntRange(min = 0, max = GROUP_PAGES - 1) Integer> pages,
                                @ForAll @IntRange(min = 0) int group) {
        PagesRequest request = new PagesRequest(action, "r-1", group, ProtocolExamples.OWNER,
                pages.stream().mapToInt(Integer::intValue).toArray());
        assertThat(PagesRequest.fromJson(action, request.toJson(), g -> GROUP_PAGES)).isEqualTo(request);
    }

    @Property
    void aPagesReplyConfirmsExactlyItsBatchInAnyOrder(
            @ForAll @UniqueElements @Size(max = 32) List<@IntRange(min = 0, max = 1000) Integer> batch,
            @ForAll long seed) {
        List<Integer> shuffled = new ArrayList<>(batch);
        Collections.shuffle(shuffled, new java.util.Random(seed));
        int[] ids = batch.stream().mapToInt(Integer::intValue).toArray();
        PagesReply reply = PagesReply.fromJson(WorkerAction.MAP, PagesReply.mapped(shuffled.stream().mapToInt(Integer::intValue)
                .toArray()).toJson());
        assertThat(reply.confirms(ids)).isTrue();
        if (!batch.isEmpty()) {
            assertThat(reply.confirms(java.util.Arrays.copyOf(ids, ids.length - 1))).isFalse();
            int[] other = ids.clone();
            other[0] = 1001;
            assertThat(reply.confirms(other)).isFalse();
        }
    }

    @Property
    void failuresRoundTripThroughJsonAndTheCodec(@ForAll("failures") RankFailure failure) {
        assertThat(RankFailureJson.fromJson(RankFailureJson.toJson(failure))).isEqualTo(failure);
        Buffer wire = Buffer.buffer("prefix");
        RankFailureReply.codec().encodeToWire(wire, new RankFailureReply(failure));
        RankFailureReply decoded = RankFailureReply.codec().decodeFromWire("prefix".length(), wire);
        assertThat(decoded.failure()).isEqualTo(failure);
        assertThat(decoded.failureCode()).isEqualTo(failure.code().code());
        assertThat(decoded.getMessage()).isEqualTo(failure.message());
    }

    @Provide
    Arbitrary<WorkerAction> pagesActions() {
        return Arbitraries.of(WorkerAction.MAP, WorkerAction.UNMAP, WorkerAction.RELEASE_PAGES);
    }

    @Provide
    Arbitrary<RankFailure> failures() {
        Arbitrary<String> rank = Arbitraries.integers().between(0, 7).map(r -> "pp0/tp" + r);
        Arbitrary<FailureCode> code = Arbitraries.of(FailureCode.class);
        Arbitrary<String> message = Arbitraries.strings().ofMaxLength(80);
        Arbitrary<Integer> groupOrPage = Arbitraries.integers().between(-1, 10_000);
        Arbitrary<String> driverError = Arbitraries.of("CUDA_ERROR_UNKNOWN", "CUDA_ERROR_OUT_OF_MEMORY").injectNull(0.3);
        Arbitrary<List<Integer>> unrestored = Arbitraries.integers().between(0, 255).list().ofMaxSize(4);
        return Combinators.combine(rank, code, message, groupOrPage, groupOrPage, driverError, Arbitraries.of(true, false), unrestored)
                .as(RankFailure::new);
    }

    /** One refusal: what a field held, and the words the 400 must say. */
    private record Refusal(String field, Object value, String says) {
    }

    @Test
    void requestsRefuseBadFieldsNamingThem() {
        refuses(WorkerAction.CREATE_TENSORS, List.of(
                new Refusal("group", null, "group is required"),
                new Refusal("group", "7", "group must be an integer, got \"7\" (String)"),
                new Refusal("group", -1, "group must be in 0..2147483647, got -1"),
                new Refusal("layers", 1.5, "layers must be an integer, got 1.5 (Double)"),
                new Refusal("layers", 1L << 40, "layers must be in 1..2147483647"),
                new Refusal("owner", "node#01", "owner must be written"),
                new Refusal("owner", "no-epoch", "owner: an owner is <nodeId>#<epoch>"),
                new Refusal("layout", "ROWS", "layout must be \"PER_LAYER\" or \"PAGE_MAJOR\", got \"ROWS\""),
                new Refusal("zeroPage", "yes", "zeroPage must be true or false"),
                new Refusal("handlePool", new JsonObject().put("boundPages", 9999), "handlePool.boundPages must be in 0..256"),
                new Refusal("handlePool", new JsonObject().put("bound", 1), "handlePool.bound is not a known field")));
        refuses(WorkerAction.TENSORS_CREATED, List.of(
                new Refusal("group", 2.0, "group must be an integer"),
                new Refusal("owner", 7, "owner must be a non-empty string")));
        for (WorkerAction action : List.of(WorkerAction.MAP, WorkerAction.UNMAP, WorkerAction.RELEASE_PAGES)) {
            refuses(action, List.of(
                    new Refusal("requestId", null, "requestId is required"),
                    new Refusal("requestId", "x".repeat(257), "requestId is 257 characters long; at most 256 are taken"),
                    new Refusal("owner", null, "owner is required"),
                    new Refusal("pages", null, "pages is required"),
                    new Refusal("pages", new JsonObject(), "pages must be an array of page ids"),
                    new Refusal("pages", new JsonArray().add(3).add(3), "pages[1] = 3 appears twice in one request"),
                    new Refusal("pages", new JsonArray().add(256), "pages[0] = 256 is out of range; the group has pages 0..255"),
                    new Refusal("pages", new JsonArray().addNull(), "pages[0] is null"),
                    new Refusal("pages", new JsonArray().add(1.0), "pages[0] must be an integer")));
        }
        refuses(WorkerAction.KEEP_HANDLES, List.of(
                new Refusal("owner", null, "owner is required"),
                new Refusal("idlePages", null, "idlePages is required"),
                new Refusal("idlePages", -1, "idlePages must be in 0..2147483647, got -1"),
                new Refusal("idlePages", "2", "idlePages must be an integer")));
        refuses(WorkerAction.DESTROY_TENSORS, List.of(new Refusal("owner", null, "owner is required")));
        refuses(WorkerAction.VIEWS, List.of(new Refusal("group", null, "group is required")));
    }

    @Test
    void repliesRefuseWhatAWorkerDoesNotSend() {
        refusesReply(WorkerAction.CREATE_TENSORS, List.of(
                new Refusal("created", false, "created must be true"),
                new Refusal("gpuBytes", null, "gpuBytes is required"),
                new Refusal("standingBytes", -1, "standingBytes must be in 0.."),
                new Refusal("extra", 1, "extra is not a known field")));
        refusesReply(WorkerAction.TENSORS_CREATED, List.of(new Refusal("created", "true", "created must be true or false")));
        refusesReply(WorkerAction.MAP, List.of(
                new Refusal("mapped", null, "mapped is required"),
                new Refusal("mapped", new JsonArray().add(-1), "mapped[0] must be in 0..")));
        refusesReply(WorkerAction.UNMAP, List.of(new Refusal("mapped", new JsonArray(), "mapped is not a known field")));
        refusesReply(WorkerAction.RELEASE_PAGES, List.of(new Refusal("clean", null, "clean is required")));
        refusesReply(WorkerAction.KEEP_HANDLES, List.of(
                new Refusal("idlePages", null, "idlePages is required"),
                new Refusal("idleHandles", -1, "idleHandles must be in 0.."),
                new Refusal("kept", 1, "kept is not a known field")));
        refusesReply(WorkerAction.DESTROY_TENSORS, List.of(new Refusal("destroyed", 1, "destroyed must be true or false")));
        refusesReply(WorkerAction.STATS, List.of(
                new Refusal("groups", new JsonObject().put("seven", new JsonObject()), "groups must be keyed by group ids"),
                new Refusal("handlesAlive", -3, "handlesAlive must be in 0.."),
                new Refusal("deviceTotalBytes", null, "deviceTotalBytes is required")));
        refusesReply(WorkerAction.VIEWS, List.of(
                new Refusal("views", new JsonArray().add(1), "views[0] must be an object"),
                new Refusal("views", new JsonArray().add(new JsonObject()), "views[0].layer is required")));
    }

    @Test
    void failuresRefuseMissingOrUnknownFields() {
        JsonObject good = RankFailureJson.toJson(ProtocolExamples.failure(WorkerAction.MAP));
        List<Refusal> refusals = List.of(
                new Refusal("code", 500, "code must be a non-empty string"),
                new Refusal("code", "TEAPOT", "code must be \"BAD_REQUEST\" or"),
                new Refusal("rollbackComplete", null, "rollbackComplete is required"),
                new Refusal("unrestoredPages", new JsonArray().add("5"), "unrestoredPages[0] must be an integer"),
                new Refusal("page", -2, "page must be in -1.."),
                new Refusal("note", "x", "note is not a known field"));
        for (Refusal refusal : refusals) {
            JsonObject bad = with(good, refusal);
            assertThatThrownBy(() -> RankFailureJson.fromJson(bad)).as(refusal.toString())
                    .isInstanceOf(IllegalArgumentException.class).hasMessageContaining(refusal.says());
        }
    }

    @Test
    void aPagesRequestAsksForTheGroupsRangeOnlyOnceItsOwnerIsRead() {
        JsonObject json = ProtocolExamples.request(WorkerAction.MAP).put("owner", "bad");
        assertThatThrownBy(() -> PagesRequest.fromJson(WorkerAction.MAP, json, g -> {
            throw new AssertionError("the group's range is not asked for a request refused before it");
        })).isInstanceOf(IllegalArgumentException.class).hasMessageContaining("owner");
    }

    private static void refuses(WorkerAction action, List<Refusal> refusals) {
        for (Refusal refusal : refusals) {
            JsonObject bad = with(ProtocolExamples.request(action), refusal);
            JsonObject before = bad.copy();
            assertThatThrownBy(() -> readRequest(action, bad)).as(action + " " + refusal)
                    .isInstanceOf(IllegalArgumentException.class).hasMessageContaining(refusal.says());
            assertThat(bad).as("reading changes nothing").isEqualTo(before);
        }
    }

    private static void refusesReply(WorkerAction action, List<Refusal> refusals) {
        for (Refusal refusal : refusals) {
            JsonObject bad = with(ProtocolExamples.reply(action), refusal);
            assertThatThrownBy(() -> readReply(action, bad)).as(action + " " + refusal)
                    .isInstanceOf(IllegalArgumentException.class).hasMessageContaining(refusal.says());
        }
    }

    private static JsonObject with(JsonObject json, Refusal refusal) {
        JsonObject copy = json.copy();
        if (refusal.value() == null) {
            copy.remove(refusal.field());
        } else {
            copy.put(refusal.field(), refusal.value());
        }
        return copy;
    }

    static Object readRequest(WorkerAction action, JsonObject json) {
        return switch (action) {
            case CREATE_TENSORS -> CreateTensorsRequest.fromJson(json);
            case TENSORS_CREATED -> TensorsCreatedRequest.fromJson(json);
            case MAP, UNMAP, RELEASE_PAGES -> PagesRequest.fromJson(action, json, g -> GROUP_PAGES);
            case KEEP_HANDLES -> KeepHandlesRequest.fromJson(json);
            case DESTROY_TENSORS -> DestroyTensorsRequest.fromJson(json);
            case STATS -> StatsRequest.fromJson(json);
            case VIEWS -> ViewsRequest.fromJson(json);
        };
    }

    /** The request's own fields plus the pp and tp a fan-out adds, which the worker checks before the record. */
    static JsonObject writeRequest(WorkerAction action, Object request) {
        Function<Object, JsonObject> json = switch (action) {
            case CREATE_TENSORS -> r -> ((CreateTensorsRequest) r).toJson();
            case TENSORS_CREATED -> r -> ((TensorsCreatedRequest) r).toJson();
            case MAP, UNMAP, RELEASE_PAGES -> r -> ((PagesRequest) r).toJson();
            case KEEP_HANDLES -> r -> ((KeepHandlesRequest) r).toJson();
            case DESTROY_TENSORS -> r -> ((DestroyTensorsRequest) r).toJson();
            case STATS -> r -> ((StatsRequest) r).toJson();
            case VIEWS -> r -> ((ViewsRequest) r).toJson();
        };
        return json.apply(request).put(RequestFields.PP, 0).put(RequestFields.TP, 1);
    }

    static Object readReply(WorkerAction action, JsonObject json) {
        return switch (action) {
            case CREATE_TENSORS -> CreateTensorsReply.fromJson(json);
            case TENSORS_CREATED -> TensorsCreatedReply.fromJson(json);
            case MAP, UNMAP, RELEASE_PAGES -> PagesReply.fromJson(action, json);
            case KEEP_HANDLES -> KeepHandlesReply.fromJson(json);
            case DESTROY_TENSORS -> DestroyTensorsReply.fromJson(json);
            case STATS -> StatsReply.fromJson(json);
            case VIEWS -> ViewsReply.fromJson(json);
        };
    }

    static JsonObject writeReply(WorkerAction action, Object reply) {
        return switch (reply) {
            case CreateTensorsReply r -> r.toJson();
            case TensorsCreatedReply r -> r.toJson();
            case PagesReply r -> r.toJson();
            case KeepHandlesReply r -> r.toJson();
            case DestroyTensorsReply r -> r.toJson();
            case StatsReply r -> r.toJson();
            case ViewsReply r -> r.toJson();
            default -> throw new IllegalArgumentException(action + ": " + reply);
        };
    }
}
