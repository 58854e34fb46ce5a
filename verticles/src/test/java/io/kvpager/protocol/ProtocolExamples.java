package io.kvpager.protocol;

import io.kvpager.FailureCode;
import io.kvpager.Geometry;
import io.kvpager.Layout;
import io.kvpager.cache.RankFailure;
import io.kvpager.device.HandlePoolOptions;
import io.vertx.core.json.JsonObject;

import java.util.List;
import java.util.Map;

/**
 * One request, one reply and one failure per action, as a worker and a coordinator exchange them:
 * the examples of docs/protocol.md, which {@link ProtocolDocTest} checks against these.
 */
final class ProtocolExamples {

    static final Owner OWNER = new Owner("5f0c2a4e-7b1d-4c55-9e0a-3d6f1b2c8a90", 1764750000000001L);
    static final Geometry GEOMETRY = new Geometry(32, 2, 65536, 2L << 20, 256, Layout.PAGE_MAJOR);

    /** A request with the fields a fan-out adds ({@code pp}, {@code tp}), as it reaches rank pp0/tp1. */
    static JsonObject request(WorkerAction action) {
        JsonObject body = switch (action) {
            case CREATE_TENSORS -> new CreateTensorsRequest(7, OWNER, GEOMETRY, false, new HandlePoolOptions(0, 4)).toJson();
            case TENSORS_CREATED -> new TensorsCreatedRequest(7, OWNER).toJson();
            case MAP -> new PagesRequest(WorkerAction.MAP, "2d9f6c1e-0b7a-4e3f-9c55-81a2b4d6e0f3-41", 7, OWNER, new int[] {4, 5}).toJson();
            case UNMAP -> new PagesRequest(WorkerAction.UNMAP, "2d9f6c1e-0b7a-4e3f-9c55-81a2b4d6e0f3-42", 7, OWNER, new int[] {4, 5}).toJson();
            case RELEASE_PAGES -> new PagesRequest(WorkerAction.RELEASE_PAGES, "2d9f6c1e-0b7a-4e3f-9c55-81a2b4d6e0f3-43", 7, OWNER,
                    new int[] {4, 5}).toJson();
            case KEEP_HANDLES -> new KeepHandlesRequest(7, OWNER, 2).toJson();
            case DESTROY_TENSORS -> new DestroyTensorsRequest(7, OWNER).toJson();
            case STATS -> new StatsRequest().toJson();
            case VIEWS -> new ViewsRequest(7).toJson();
        };
        return body.put(RequestFields.PP, 0).put(RequestFields.TP, 1);
    }

    static JsonObject reply(WorkerAction action) {
        return switch (action) {
            case CREATE_TENSORS -> new CreateTensorsReply(7, 2L << 20, "sim:1@node-a", 141L << 30, 0, null).toJson();
            case TENSORS_CREATED -> new TensorsCreatedReply(true, OWNER, true, true).toJson();
            case MAP -> PagesReply.mapped(new int[] {4, 5}).toJson();
            case UNMAP -> PagesReply.unmapped(new int[] {4, 5}).toJson();
            case RELEASE_PAGES -> PagesReply.released(new int[] {5}, new int[] {4, 5}).toJson();
            case KEEP_HANDLES -> new KeepHandlesReply(2, 0).toJson();
            case DESTROY_TENSORS -> new DestroyTensorsReply(true).toJson();
            case STATS -> new StatsReply("pp0/tp1", "sim:1 pp0/tp1", "sim:1@node-a", "kvpager-gpu1-pp0-tp1-0",
                    Map.of(7, new GroupStats(2, 2, Layout.PAGE_MAJOR, 256, false, 0, 0, 0, new int[0], 0, OWNER.toString())),
                    2, 0, 0, List.of(new HandlePoolStats(128L << 20, 0, 0, 2, 2, 0, 0)), 0, 268435456L, 151129161728L,
                    151397597184L).toJson();
            case VIEWS -> new ViewsReply(List.of(new TensorView(0, 0, 140230682214400L, 65536, 8192, 32, 134217728L),
                    new TensorView(0, 1, 140230684311552L, 65536, 8192, 32, 134217728L))).toJson();
        };
    }

    static RankFailure failure(WorkerAction action) {
        return switch (action) {
            case CREATE_TENSORS -> new RankFailure("pp0/tp1", FailureCode.CONFLICT, "pp0/tp1 group 7: tensors already exist with "
                    + "Geometry[layers=32, kvBuffers=2, blockBytes=65536, pageBytes=2097152, pages=128, layout=PAGE_MAJOR], handlePool "
                    + "{\"prefillPages\":0,\"boundPages\":0}; destroy-tensors first to change them", 7, RankFailure.NONE, null, true,
                    List.of());
            case TENSORS_CREATED -> new RankFailure("pp0/tp1", FailureCode.BAD_REQUEST, "pp0/tp1: group must be an integer, got "
                    + "\"7\" (String)", RankFailure.NONE, RankFailure.NONE, null, true, List.of());
            case MAP -> new RankFailure("pp0/tp1", FailureCode.DRIVER_ERROR, "pp0/tp1 group 7 page 5: cuMemMap failed: "
                    + "CUDA_ERROR_UNKNOWN; rollback incomplete (page 5: unmap a new handle: cuMemUnmap failed: CUDA_ERROR_UNKNOWN), "
                    + "pages not restored: [5]", 7, 5, "CUDA_ERROR_UNKNOWN", false, List.of(5));
            case UNMAP -> new RankFailure("pp0/tp1", FailureCode.CONFLICT, "pp0/tp1 group 7 page 4: not mapped",
                    7, 4, null, true, List.of());
            case RELEASE_PAGES -> new RankFailure("pp0/tp1", FailureCode.DRIVER_ERROR, "pp0/tp1 group 7 page 5: cuMemRelease "
                    + "failed: CUDA_ERROR_UNKNOWN; release-pages again to finish", 7, 5, "CUDA_ERROR_UNKNOWN", true, List.of());
            case KEEP_HANDLES -> new RankFailure("pp0/tp1", FailureCode.BAD_REQUEST, "pp0/tp1 group 7: idlePages must be 0 to 252 "
                    + "(the group's 256 pages less its handlePool.boundPages 4), got 300", 7, RankFailure.NONE, null, true, List.of());
            case DESTROY_TENSORS -> new RankFailure("pp0/tp1", FailureCode.CONFLICT, "pp0/tp1 group 7: owned by " + OWNER
                    + ", not by other-node#3, the request's owner; a new owner claims the group with create-tensors", 7,
                    RankFailure.NONE, null, true, List.of());
            case STATS -> new RankFailure("pp0/tp1", FailureCode.STOPPING, "pp0/tp1: the worker is stopping", RankFailure.NONE,
                    RankFailure.NONE, null, true, List.of());
            case VIEWS -> new RankFailure("pp0/tp1", FailureCode.NO_TENSORS, "pp0/tp1 group 7: no tensors on this rank; send "
                    + "create-tensors first", 7, RankFailure.NONE, null, true, List.of());
        };
    }

    private ProtocolExamples() {
    }
}
