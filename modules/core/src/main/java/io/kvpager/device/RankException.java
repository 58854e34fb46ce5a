package io.kvpager.device;

import io.kvpager.FailureCode;
import io.kvpager.spi.DeviceException;

import java.util.List;

/**
 * A request one rank's device could not carry out: the failure code the caller switches on, the
 * page it failed at (or none), what went wrong, and, for a batch that was undone, whether the
 * undo was complete and which pages it could not restore. A rank worker prefixes the rank and
 * group when it sends the failure, so the text reads
 * {@code pp0/tp1 group 7 page 5: cuMemMap failed: ...}.
 */
public final class RankException extends RuntimeException {

    /** No page: the failure concerns the request or the group as a whole. */
    public static final int NO_PAGE = -1;

    private final FailureCode code;
    private final int page;
    private final boolean rollbackComplete;
    private final List<Integer> unrestoredPages;

    private RankException(FailureCode code, int page, String detail, Throwable cause, boolean rollbackComplete,
                          List<Integer> unrestoredPages) {
        super(detail, cause);
        this.code = code;
        this.page = page;
        this.rollbackComplete = rollbackComplete;
        this.unrestoredPages = List.copyOf(unrestoredPages);
    }

    public RankException(FailureCode code, int page, String detail, Throwable cause) {
        this(code, page, detail, cause, true, List.of());
    }

    public RankException(FailureCode code, String detail) {
        this(code, NO_PAGE, detail, null);
    }

    public RankException(FailureCode code, int page, String detail) {
        this(code, page, detail, null);
    }

    /**
     * The failure a thrown exception means: a driver's out-of-memory is 507, any other driver
     * error 500, bad arguments 400, and anything unexpected 500 with its type, so that no
     * exception ever goes unanswered.
     */
    public static RankException of(Throwable error) {
        return switch (error) {
            case RankException failure -> failure;
            case DeviceException e -> new RankException(e.isOutOfMemory() ? FailureCode.OUT_OF_MEMORY : FailureCode.DRIVER_ERROR,
                    NO_PAGE, e.getMessage(), e);
            case IllegalArgumentException e -> new RankException(FailureCode.BAD_REQUEST, NO_PAGE, e.getMessage(), e);
            default -> new RankException(FailureCode.DRIVER_ERROR, NO_PAGE, "internal error: " + error, error);
        };
    }

    /**
     * The failure {@code error} means, at {@code page}, with {@code note} (what to do to finish a
     * request that is not all or nothing) appended when there is one.
     */
    static RankException at(int page, Throwable error, String note) {
        RankException failure = of(error);
        String detail = failure.getMessage() + (note == null || note.isEmpty() ? "" : "; " + note);
        return new RankException(failure.code, page == NO_PAGE ? failure.page : page, detail, failure.getCause(),
                failure.rollbackComplete, failure.unrestoredPages);
    }

    /** The failure {@code error} means, at {@code page}, after a rollback that ended as {@code rollback} says. */
    static RankException at(int page, Throwable error, UndoLog.Outcome rollback) {
        RankException failure = at(page, error, rollback.note());
        return new RankException(failure.code, failure.page, failure.getMessage(), failure.getCause(),
                failure.rollbackComplete && rollback.clean(), rollback.unknownPages());
    }

    public FailureCode code() {
        return code;
    }

    /** The first page that failed, or {@link #NO_PAGE}. */
    public int page() {
        return page;
    }

    /**
     * False when the request was a batch that failed and undoing it failed too: the device no
     * longer holds exactly what it held before. True otherwise, including for requests that are
     * not all or nothing (releasing pages, destroying tensors), whose text says how to finish.
     */
    public boolean rollbackComplete() {
        return rollbackComplete;
    }

    /** The pages whose mapping a failed rollback left other than before the batch, ascending; empty when none. */
    public List<Integer> unrestoredPages() {
        return unrestoredPages;
    }

    /** The driver's error name when a driver call caused this failure ({@code CUDA_ERROR_OUT_OF_MEMORY}), else null. */
    public String driverError() {
        for (Throwable cause = getCause(); cause != null && cause != cause.getCause(); cause = cause.getCause()) {
            if (cause instanceof DeviceException device) {
                return device.errorName();
            }
        }
        return null;
    }

    /** Whether this failure is one the device side did not anticipate (a bug, not a request or driver problem). */
    public boolean unexpected() {
        Throwable cause = getCause();
        return cause != null && !(cause instanceof DeviceException) && !(cause instanceof IllegalArgumentException)
                && !(cause instanceof RankException);
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
