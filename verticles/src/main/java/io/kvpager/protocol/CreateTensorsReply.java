package io.kvpager.protocol;

import io.vertx.core.json.JsonObject;

/**
 * The answer to {@code create-tensors}: the tensors exist, and what the coordinator's GPU budget
 * needs to know about them: which GPU ({@code gpu}, absent for a worker that does not name it, whose
 * memory is then not brokered), how big it is, and the memory the group holds besides its pages.
 *
 * @param gpu the GPU's id, or null
 * @param gpuBytes the GPU's memory; 0 when {@code gpu} is null
 * @param reclaimed what another owner had left in the group and the worker released first, or null
 */
public record CreateTensorsReply(int group, long granularity, String gpu, long gpuBytes, long standingBytes,
                                 Reclaimed reclaimed) {

    public static final String CREATED = "created";
    public static final String GROUP = "group";
    public static final String GRANULARITY = "granularity";
    public static final String GPU = "gpu";
    public static final String GPU_BYTES = "gpuBytes";
    public static final String STANDING_BYTES = "standingBytes";
    public static final String RECLAIMED = "reclaimed";

    /**
     * What a new owner's {@code create-tensors} released of the previous owner's group.
     *
     * @param owner the previous owner, as the worker knew it
     */
    public record Reclaimed(String owner, int pages, long bytes) {

        public static final String OWNER = "owner";
        public static final String PAGES = "pages";
        public static final String BYTES = "bytes";

        public JsonObject toJson() {
            return new JsonObject().put(OWNER, owner).put(PAGES, pages).put(BYTES, bytes);
        }

        static Reclaimed read(RequestBody body) {
            body.requireOnly(OWNER, PAGES, BYTES);
            return new Reclaimed(body.requireString(OWNER), body.requireInt(PAGES, 0, Integer.MAX_VALUE),
                    body.requireLong(BYTES, 0, Long.MAX_VALUE));
        }
    }

    public JsonObject toJson() {
        JsonObject json = new JsonObject().put(CREATED, true).put(GROUP, group).put(GRANULARITY, granularity);
        if (gpu != null) {
            json.put(GPU, gpu).put(GPU_BYTES, gpuBytes);
        }
        json.put(STANDING_BYTES, standingBytes);
        return reclaimed == null ? json : json.put(RECLAIMED, reclaimed.toJson());
    }

    /** Reads the answer; {@code created} must be true, {@code gpuBytes} comes with {@code gpu}, {@code standingBytes} defaults to 0. */
    public static CreateTensorsReply fromJson(JsonObject json) {
        RequestBody body = new RequestBody(json);
        body.requireOnly(CREATED, GROUP, GRANULARITY, GPU, GPU_BYTES, STANDING_BYTES, RECLAIMED);
        if (!body.requireBoolean(CREATED)) {
            throw new IllegalArgumentException(CREATED + " must be true in an answer to create-tensors");
        }
        String gpu = body.optionalString(GPU);
        long gpuBytes = gpu == null ? 0 : body.requireLong(GPU_BYTES, 1, Long.MAX_VALUE);
        RequestBody reclaimed = body.optionalObject(RECLAIMED);
        return new CreateTensorsReply(body.requireInt(GROUP, 0, Integer.MAX_VALUE), body.requireLong(GRANULARITY, 1, Long.MAX_VALUE),
                gpu, gpuBytes, json.getValue(STANDING_BYTES) == null ? 0 : body.requireLong(STANDING_BYTES, 0, Long.MAX_VALUE),
                reclaimed == null ? null : Reclaimed.read(reclaimed));
    }
}
