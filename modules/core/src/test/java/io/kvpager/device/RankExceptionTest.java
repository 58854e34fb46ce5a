package io.kvpager.device;

import io.kvpager.FailureCode;
import io.kvpager.spi.DeviceException;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

class RankExceptionTest {

    @Test
    void aThrownExceptionMeansACode() {
        assertThat(RankException.of(new DeviceException("cuMemCreate", DeviceException.OUT_OF_MEMORY, 2, "")).code())
                .isEqualTo(FailureCode.OUT_OF_MEMORY);
        assertThat(RankException.of(new DeviceException("cuMemMap", DeviceException.UNKNOWN, 999, "")).code())
                .isEqualTo(FailureCode.DRIVER_ERROR);
        assertThat(RankException.of(new IllegalArgumentException("bad")).code()).isEqualTo(FailureCode.BAD_REQUEST);
        RankException bug = RankException.of(new IllegalStateException("bug"));
        assertThat(bug.code()).isEqualTo(FailureCode.DRIVER_ERROR);
        assertThat(bug.unexpected()).isTrue();
        assertThat(bug).hasMessage("internal error: java.lang.IllegalStateException: bug");
        RankException refused = new RankException(FailureCode.CONFLICT, 3, "already mapped");
        assertThat(RankException.of(refused)).isSameAs(refused);
        assertThat(refused.unexpected()).isFalse();
    }

    @Test
    void aCleanRollbackIsComplete() {
        UndoLog undo = new UndoLog();
        undo.page(4);
        undo.push("release", () -> { });
        RankException failure = RankException.at(5, new DeviceException("cuMemCreate", DeviceException.OUT_OF_MEMORY, 2, ""),
                undo.rollback());
        assertThat(failure.code()).isEqualTo(FailureCode.OUT_OF_MEMORY);
        assertThat(failure.page()).isEqualTo(5);
        assertThat(failure.rollbackComplete()).isTrue();
        assertThat(failure.unrestoredPages()).isEmpty();
        assertThat(failure.text("pp0/tp1", 7)).isEqualTo("pp0/tp1 group 7 page 5: cuMemCreate failed: CUDA_ERROR_OUT_OF_MEMORY");
    }

    @Test
    void aRollbackThatFailedNamesThePagesItCouldNotRestore() {
        UndoLog undo = new UndoLog();
        for (int page : new int[] {2, 6, 3}) {
            undo.page(page);
            undo.push("unmap", () -> {
                throw new DeviceException("cuMemUnmap", DeviceException.UNKNOWN, 999, "");
            });
        }
        RankException failure = RankException.at(RankException.NO_PAGE,
                new DeviceException("cuCtxSynchronize", DeviceException.ILLEGAL_ADDRESS, 700, ""), undo.rollback());
        assertThat(failure.rollbackComplete()).isFalse();
        assertThat(failure.unrestoredPages()).containsExactly(2, 3, 6);
        assertThat(failure.text("pp0/tp0", -1)).startsWith("pp0/tp0: cuCtxSynchronize failed: CUDA_ERROR_ILLEGAL_ADDRESS; rollback incomplete (")
                .endsWith("pages not restored: [2, 3, 6]");
    }

    @Test
    void aRequestThatIsNotAllOrNothingKeepsItsNoteAndIsNoIncompleteRollback() {
        RankException failure = RankException.at(2, new DeviceException("cuMemUnmap", DeviceException.UNKNOWN, 999, ""),
                "release-pages again to finish");
        assertThat(failure.rollbackComplete()).isTrue();
        assertThat(failure.unrestoredPages()).isEmpty();
        assertThat(failure).hasMessage("cuMemUnmap failed: CUDA_ERROR_UNKNOWN; release-pages again to finish");
    }
}
