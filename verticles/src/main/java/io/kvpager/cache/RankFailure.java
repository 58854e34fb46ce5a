package io.kvpager.cache;

import io.kvpager.FailureCode;

import java.util.Objects;

/**
 * How one rank failed a request: the rank ({@code "pp1/tp0"}), the failure code a caller switches
 * on, and the rank's own message, which names the group, the first page that failed and the
 * driver's error ({@code "pp1/tp0 group 7 page 5: cuMemMap failed: CUDA_ERROR_OUT_OF_MEMORY"}).
 */
public record RankFailure(String rank, FailureCode code, String message) {

    public RankFailure {
        Objects.requireNonNull(rank, "rank");
        Objects.requireNonNull(code, "code");
        message = message == null ? "" : message;
    }

    @Override
    public String toString() {
        return rank + " " + code + (code.code() > 0 ? " (" + code.code() + ")" : "") + ": " + message;
    }
}
