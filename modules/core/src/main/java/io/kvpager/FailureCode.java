package io.kvpager;

/** The failure codes of kvpager's event-bus replies; a caller switches on these, not on text. */
public enum FailureCode {
    /** Missing or mistyped field, page id out of range, unknown action. */
    BAD_REQUEST(400),
    /** No tensors for that group on this rank yet. */
    NO_TENSORS(404),
    /** Page already mapped (on map) or not mapped (on unmap). */
    CONFLICT(409),
    /** Any other driver error. */
    DRIVER_ERROR(500),
    /** The worker is stopping. */
    STOPPING(503),
    /** The device is out of memory. */
    OUT_OF_MEMORY(507),
    /**
     * The coordinator was displaced: the cluster counted its node gone while it ran (a pause, a
     * partition), so the ranks gave its pages back. Every block allocated before is gone. Never sent by a worker.
     */
    DISPLACED(410),
    /** The rank did not answer within the send timeout. Never sent by a worker. */
    TIMEOUT(-1),
    /** No consumer at the rank's address. Never sent by a worker. */
    NO_RANK(-2);

    private final int code;

    FailureCode(int code) {
        this.code = code;
    }

    public int code() {
        return code;
    }

    /** The code for a numeric reply failure; unknown numbers read as {@link #DRIVER_ERROR}. */
    public static FailureCode of(int code) {
        for (FailureCode c : values()) {
            if (c.code == code) {
                return c;
            }
        }
        return DRIVER_ERROR;
    }
}
