package io.kvpager.impl;

import io.kvpager.FailureCode;
import io.kvpager.spi.DeviceException;

/**
 * A request this rank could not carry out: the failure code the caller switches on, the page it
 * failed at (or none), and what went wrong. The worker prefixes the rank and group when it sends
 * the failure, so the text reads {@code pp0/tp1 group 7 page 5: cuMemMap failed: ...}.
 */
public final class RankFailure extends RuntimeException {

    /** No page: the failure concerns the request or the group as a whole. */
    static final int NO_PAGE = -1;

    private final FailureCode code;
    private final int page;

    RankFailure(FailureCode code, int page, String detail, Throwable cause) {
        super(detail, cause);
        this.code = code;
        this.page = page;
    }

    public RankFailure(FailureCode code, String detail) {
        this(code, NO_PAGE, detail, null);
    }

    RankFailure(FailureCode code, int page, String detail) {
        this(code, page, detail, null);
    }

    /**
     * The failure a thrown exception means: a driver's out-of-memory is 507, any other driver
     * error 500, bad arguments 400, and anything unexpected 500 with its type, so that no
     * exception ever goes unanswered.
     */
    public static RankFailure of(Throwable error) {
        return switch (error) {
            case RankFailure failure -> failure;
            case DeviceException e -> new RankFailure(e.isOutOfMemory() ? FailureCode.OUT_OF_MEMORY : FailureCode.DRIVER_ERROR,
                    NO_PAGE, e.getMessage(), e);
            case IllegalArgumentException e -> new RankFailure(FailureCode.BAD_REQUEST, NO_PAGE, e.getMessage(), e);
            default -> new RankFailure(FailureCode.DRIVER_ERROR, NO_PAGE, "internal error: " + error, error);
        };
    }

    /**
     * The failure {@code error} means, at {@code page}, with {@code note} (what a rollback left
     * behind) appended when there is one.
     */
    static RankFailure at(int page, Throwable error, String note) {
        RankFailure failure = of(error);
        String detail = failure.getMessage() + (note == null || note.isEmpty() ? "" : "; " + note);
        return new RankFailure(failure.code, page == NO_PAGE ? failure.page : page, detail, failure.getCause());
    }

    public FailureCode code() {
        return code;
    }

    /** The first page that failed, or {@link #NO_PAGE}. */
    int page() {
        return page;
    }

    /** Whether this failure is one the worker did not anticipate (a bug, not a request or driver problem). */
    public boolean unexpected() {
        Throwable cause = getCause();
        return cause != null && !(cause instanceof DeviceException) && !(cause instanceof IllegalArgumentException)
                && !(cause instanceof RankFailure);
    }

    /** The text sent to the caller: rank, group when known, page when known, then what failed. */
    public String text(String rank, int group) {
        StringBuilder text = new StringBuilder(rank);
        if (group >= 0) {
            text.append(" group ").append(group);
        }
        if (page >= 0) {
            text.append(" page ").append(page);
        }
        return text.append(": ").append(getMessage()).toString();
    }
}
