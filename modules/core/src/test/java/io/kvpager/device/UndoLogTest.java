package io.kvpager.device;

import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

class UndoLogTest {

    @Test
    void undoesNewestFirst() {
        List<String> done = new ArrayList<>();
        UndoLog undo = new UndoLog();
        undo.page(1);
        undo.push("a", () -> done.add("a"));
        undo.push("b", () -> done.add("b"));
        undo.page(2);
        undo.push("c", () -> done.add("c"));
        UndoLog.Outcome outcome = undo.rollback();
        assertThat(done).containsExactly("c", "b", "a");
        assertThat(outcome.clean()).isTrue();
        assertThat(outcome.note()).isEmpty();
        assertThat(undo.isEmpty()).isTrue();
    }

    @Test
    void aFailedStepSkipsTheRestOfItsPageButNotOtherPages() {
        List<String> done = new ArrayList<>();
        UndoLog undo = new UndoLog();
        undo.page(1);
        undo.push("release 1", () -> done.add("release 1"));
        undo.page(2);
        undo.push("release 2", () -> done.add("release 2"));
        undo.push("unmap 2", () -> {
            throw new IllegalStateException("cuMemUnmap failed: CUDA_ERROR_UNKNOWN");
        });
        UndoLog.Outcome outcome = undo.rollback();
        assertThat(done).containsExactly("release 1");
        assertThat(outcome.unknownPages()).containsExactly(2);
        assertThat(outcome.note()).isEqualTo("rollback incomplete (page 2: unmap 2: cuMemUnmap failed: CUDA_ERROR_UNKNOWN), pages not restored: [2]");
    }
}
