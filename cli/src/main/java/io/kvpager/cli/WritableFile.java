package io.kvpager.cli;

import java.io.IOException;
import java.nio.file.AccessDeniedException;
import java.nio.file.FileSystemException;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * Checks, before a long run, that the file it will write at the end can be written: its folder
 * exists or can be made, and a file can be created there (an existing one is kept as it is).
 */
final class WritableFile {

    private WritableFile() {
    }

    /**
     * @throws IllegalArgumentException naming {@code flag}, the file and why it cannot be written
     */
    static void check(String flag, Path file) {
        Path absolute = file.toAbsolutePath();
        try {
            if (Files.isDirectory(absolute)) {
                throw new IllegalArgumentException(flag + " " + file + " is a directory; name a file, e.g. " + flag + " "
                        + file.resolve("memory.png"));
            }
            if (Files.exists(absolute)) {
                if (!Files.isRegularFile(absolute) || !Files.isWritable(absolute)) {
                    throw new IllegalArgumentException(flag + " " + file + " exists and cannot be overwritten");
                }
                return;
            }
            Path parent = absolute.getParent();
            if (parent != null) {
                Files.createDirectories(parent);
            }
            Files.delete(Files.createFile(absolute));
        } catch (IOException | SecurityException e) {
            throw new IllegalArgumentException(flag + " " + file + " cannot be written: " + why(e), e);
        }
    }

    private static String why(Exception e) {
        if (e instanceof AccessDeniedException) {
            return "permission denied";
        }
        if (e instanceof FileSystemException f && f.getReason() != null) {
            return f.getReason();
        }
        return e.getClass().getSimpleName() + ": " + OneLine.of(e);
    }
}
