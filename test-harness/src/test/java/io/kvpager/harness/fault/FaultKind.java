package io.kvpager.harness.fault;

import io.kvpager.FailureCode;
import io.kvpager.MissReason;

/** How a rank fails one request. */
enum FaultKind {
    /** The driver call fails with an error that is not out of memory: the rank answers 500. */
    DRIVER_ERROR(FailureCode.DRIVER_ERROR, MissReason.MAP_FAILED),
    /** The driver call fails with {@code CUDA_ERROR_OUT_OF_MEMORY}: the rank answers 507. */
    OUT_OF_MEMORY(FailureCode.OUT_OF_MEMORY, MissReason.OUT_OF_MEMORY),
    /** The driver call takes longer than the send timeout, then succeeds: the rank answers too late. */
    DELAY_PAST_TIMEOUT(FailureCode.TIMEOUT, MissReason.MAP_FAILED),
    /** The driver call never returns until the test lets it go: the rank answers nothing in time. */
    HANG(FailureCode.TIMEOUT, MissReason.MAP_FAILED),
    /** The rank's worker is undeployed after the fan-out has begun and before its request arrives. */
    RANK_UNDEPLOYED(FailureCode.NO_RANK, MissReason.RANK_DOWN),
    /** The rank does the work and answers, and the answer is lost on its way back. */
    REPLY_LOST(FailureCode.TIMEOUT, MissReason.MAP_FAILED);

    private final FailureCode code;
    private final MissReason miss;

    FaultKind(FailureCode code, MissReason miss) {
        this.code = code;
        this.miss = miss;
    }

    /** The code the caller's failure names the rank with. */
    FailureCode code() {
        return code;
    }

    /** The reason an allocation that meets this fault misses with. */
    MissReason miss() {
        return miss;
    }

    /** Whether the fault is injected into a driver call (the others lose the request as a whole). */
    boolean inDriver() {
        return this == DRIVER_ERROR || this == OUT_OF_MEMORY || this == DELAY_PAST_TIMEOUT || this == HANG;
    }

    /** Whether the caller learns of it only when the send timeout passes. */
    boolean timesOut() {
        return code == FailureCode.TIMEOUT;
    }
}
