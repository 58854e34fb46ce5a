package io.kvpager.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** {@link WritableFile}: the check before a run that writes a file at its end. */
class WritableFileTest {

    @TempDir
    Path dir;

    @Test
    void runsStartedAtOnceWritingTheSameFileAllPassTheCheckAndLeaveNothingBehind() throws Exception {
        Path chart = dir.resolve("kvpager-demo.png");
        ExecutorService pool = Executors.newFixedThreadPool(8);
        try {
            for (int round = 0; round < 50; round++) {
                List<Callable<Void>> checks = new ArrayList<>();
                for (int i = 0; i < 8; i++) {
                    checks.add(() -> {
                        WritableFile.check("--out", chart);
                        return null;
                    });
                }
                for (Future<Void> check : pool.invokeAll(checks)) {
                    check.get();
                }
            }
        } finally {
            pool.shutdownNow();
        }
        try (var left = Files.list(dir)) {
            assertThat(left).isEmpty();
        }
    }

    @Test
    void anExistingFileIsKeptAsItIs() throws Exception {
        Path chart = Files.writeString(dir.resolve("old.png"), "old");
        WritableFile.check("--out", chart);
        assertThat(Files.readString(chart)).isEqualTo("old");
    }

    @Test
    void aDirectoryOrAFolderThatCannotBeMadeIsRefusedByName() throws Exception {
        assertThatThrownBy(() -> WritableFile.check("--out", dir)).hasMessageStartingWith("--out " + dir + " is a directory");
        Path plain = Files.writeString(dir.resolve("plain-file"), "x");
        assertThatThrownBy(() -> WritableFile.check("--out", plain.resolve("memory.png")))
                .hasMessageStartingWith("--out " + plain.resolve("memory.png") + " cannot be written");
    }
}
