package io.kvpager.cache;

import io.kvpager.FailureCode;

import java.util.List;
import java.util.Objects;

/**
 * A kvpager request that failed: a code to switch on and, when ranks were involved, every rank
 * that failed with its own code and message. The message lists them too, so a log line alone says
 * what went wrong where.
 *
 * <p>The code is the most telling of the ranks' codes: {@link FailureCode#OUT_OF_MEMORY} when any
 * rank ran out of memory, else the first failing rank's code.
 */
public class KvPagerException extends RuntimeException {

    private final FailureCode code;
    private final List<RankFailure> failures;

    public KvPagerException(FailureCode code, String message) {
        this(code, message, List.of(), null);
    }

    public KvPagerException(FailureCode code, String message, List<RankFailure> failures, Throwable cause) {
        super(message, cause);
        this.code = Objects.requireNonNull(code, "code");
        this.failures = List.copyOf(failures);
    }

    /**
     * One failure for a request that failed on the listed ranks.
     *
     * @param what the request in words, e.g. {@code "map of pages [3, 4] in group 7"}
     * @param targets how many ranks the request went to
     */
    public static KvPagerException ofRanks(String what, int targets, List<RankFailure> failures) {
        if (failures.isEmpty()) {
            throw new IllegalArgumentException("a rank failure needs at least one failing rank");
        }
        FailureCode code = failures.getFirst().code();
        for (RankFailure f : failures) {
            if (f.code() == FailureCode.OUT_OF_MEMORY) {
                code = FailureCode.OUT_OF_MEMORY;
                break;
            }
        }
        StringBuilder message = new StringBuilder(what).append(" failed on ").append(failures.size())
                .append(" of ").append(targets).append(targets == 1 ? " rank: " : " ranks: ");
        for (int i = 0; i < failures.size(); i++) {
            message.append(i == 0 ? "" : "; ").append(failures.get(i));
        }
        return new KvPagerException(code, message.toString(), failures, null);
    }

    /** The same failure with a sentence added to its message (what was done about it). */
    public KvPagerException withNote(String note) {
        return new KvPagerException(code, getMessage() + "; " + note, failures, getCause());
    }

    public FailureCode code() {
        return code;
    }

    /** Every rank that failed, in rank order; empty when the failure was not a rank's. */
    public List<RankFailure> failures() {
        return failures;
    }

    /** The failure of {@code rank}, or {@code null} when that rank did not fail. */
    public RankFailure failureOf(String rank) {
        for (RankFailure f : failures) {
            if (f.rank().equals(rank)) {
                return f;
            }
        }
        return null;
    }
}
