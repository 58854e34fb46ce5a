package io.kvpager.protocol;

import io.vertx.core.json.JsonArray;

import java.util.ArrayList;

/**
 * The fields that requests of several actions share. A fan-out writes {@link #PP}, {@link #TP},
 * {@link #GROUP} and {@link #OWNER} into every body itself, and {@link #REQUEST_ID} into every map,
 * unmap and release-pages; a worker refuses a request whose {@code pp} or {@code tp} is not its own.
 */
public final class RequestFields {

    public static final String PP = "pp";
    public static final String TP = "tp";
    public static final String GROUP = "group";
    public static final String OWNER = "owner";
    public static final String REQUEST_ID = "requestId";
    public static final String PAGES = "pages";
    /** The longest requestId taken; a coordinator's are under 64 characters. */
    public static final int MAX_REQUEST_ID = 256;

    private RequestFields() {
    }

    /** Page ids as the wire carries them. */
    public static JsonArray pageArray(int[] pages) {
        JsonArray array = new JsonArray(new ArrayList<>(pages.length));
        for (int p : pages) {
            array.add(p);
        }
        return array;
    }
}
