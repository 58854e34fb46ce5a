package io.kvpager.harness.fuzz;

import io.vertx.core.buffer.Buffer;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;

/**
 * One message a hostile or broken sender puts on the bus, and the refusal it must get.
 *
 * @param target {@code pp0/tp1} or {@code coordinator}
 * @param address where it is sent
 * @param action the {@code action} header, or {@code null} for none
 * @param body the body, any type the bus carries, or {@code null}
 * @param expected the failure code it must be answered with, or {@link #ANY_REFUSAL} when several
 *     are right (400, 404 or 409)
 * @param defect what is wrong with it, in words
 */
public record HostileMessage(String target, String address, String action, Object body, int expected, String defect) {

    /** {@code expected} when any refusal (400, 404, 409) is right. */
    public static final int ANY_REFUSAL = 0;

    /** The message in a line, with long bodies cut short. */
    public String describe() {
        String shown = switch (body) {
            case null -> "null";
            case JsonObject json -> json.encode();
            case JsonArray json -> json.encode();
            case Buffer buffer -> "Buffer of " + buffer.length() + " bytes";
            case byte[] bytes -> "byte[" + bytes.length + "]";
            case String s -> "\"" + s + "\"";
            default -> body.getClass().getSimpleName() + " " + body;
        };
        if (shown.length() > 300) {
            shown = shown.substring(0, 300) + "... (" + shown.length() + " chars)";
        }
        return target + " action " + (action == null ? "(none)" : "'" + action + "'") + ", " + defect + ": " + shown;
    }
}
