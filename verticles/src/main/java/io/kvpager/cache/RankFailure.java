package io.kvpager.cache;

import io.kvpager.FailureCode;

import java.util.List;
import java.util.Objects;

/**
 * How one rank failed a request: the rank ({@code "pp1/tp0"}), the failure code a caller switches
 * on, and the rank's own message, which names the group, the first page that failed and the
 * driver's error ({@code "pp1/tp0 group 7 page 5: cuMemMap failed: CUDA_ERROR_OUT_OF_MEMORY"}).
 *
 * <p>The same facts travel as fields, so that nothing has to read the message: the group and page
 * ({@link #NONE} when the failure concerns neither), the driver's error name, and whether the rank
 * undid its part of the request. A rank whose rollback was not complete holds some of the
 * request's changes: {@code unrestoredPages} are the pages whose mapping is not what it was before.
 *
 * @param rank the rank, {@code pp<P>/tp<R>}
 * @param code what a caller switches on
 * @param message the rank's own words, for people and logs
 * @param group the group the request was for, or {@link #NONE}
 * @param page the first page that failed, or {@link #NONE}
 * @param driverError the driver's error name ({@code CUDA_ERROR_OUT_OF_MEMORY}) or the device's text; null when no driver call failed
 * @param rollbackComplete false when the rank tried to undo its part of the request and could not
 * @param unrestoredPages the pages the rank could not restore, ascending; empty when the rollback was complete
 */
public record RankFailure(String rank, FailureCode code, String message, int group, int page, String driverError,
                          boolean rollbackComplete, List<Integer> unrestoredPages) {

    /** No group or no page: the failure concerns the request as a whole. */
    public static final int NONE = -1;

    public RankFailure {
        Objects.requireNonNull(rank, "rank");
        Objects.requireNonNull(code, "code");
        message = message == null ? "" : message;
        group = Math.max(group, NONE);
        page = Math.max(page, NONE);
        unrestoredPages = unrestoredPages == null ? List.of() : List.copyOf(unrestoredPages);
    }

    /** A failure with no group, page or driver error, whose rank holds none of the request's changes. */
    public RankFailure(String rank, FailureCode code, String message) {
        this(rank, code, message, NONE, NONE, null, true, List.of());
    }

    @Override
    public String toString() {
        return rank + " " + code + (code.code() > 0 ? " (" + code.code() + ")" : "") + ": " + message;
    }
}
