package io.kvpager.protocol;

import io.kvpager.Geometry;
import io.kvpager.device.HandlePoolOptions;
import io.vertx.core.json.JsonObject;

/**
 * The {@code handlePool} field of {@code create-tensors} and of a group's {@code stats} line: how
 * many page ids' handles a rank prefills and keeps idle for a group ({@link HandlePoolOptions}).
 */
public final class HandlePoolJson {

    private HandlePoolJson() {
    }

    /**
     * Reads the {@code handlePool} field of a {@code create-tensors} body; defaults where it or a
     * field is missing.
     *
     * @throws IllegalArgumentException (a 400) for an unknown field, a value that is not an
     *     integer, a bound above the group's pages, a prefill above the bound, or more idle
     *     handles than a rank can count
     */
    public static HandlePoolOptions read(RequestBody body, Geometry geometry) {
        RequestBody options = body.optionalObject("handlePool");
        if (options == null) {
            return HandlePoolOptions.defaults(geometry);
        }
        options.requireOnly("prefillPages", "boundPages");
        int bound = options.optionalInt("boundPages", 0, geometry.pages(), HandlePoolOptions.defaultBoundPages(geometry));
        int prefill = options.optionalInt("prefillPages", 0, geometry.pages(), 0);
        if (prefill > bound) {
            throw new IllegalArgumentException("handlePool.prefillPages " + prefill + " is above handlePool.boundPages "
                    + bound + "; prefilled handles are idle ones, so the bound must hold them");
        }
        HandlePoolOptions read = new HandlePoolOptions(prefill, bound);
        read.requireFits(geometry);
        return read;
    }

    public static JsonObject toJson(HandlePoolOptions options) {
        return new JsonObject().put("prefillPages", options.prefillPages()).put("boundPages", options.boundPages());
    }
}
