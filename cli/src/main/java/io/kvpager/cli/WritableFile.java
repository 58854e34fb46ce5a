package io.kvpager.cli;

import java.io.IOException;
import java.nio.file.AccessDeniedException;
import java.nio.file.FileSystemException;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * Checks, before a long run, that the file it will write at the end can be written: it is not a
 * directory, its folder exists or can be made, and a new file can be created there (the file is
 * written beside itself and moved over the old one at the end, so the folder must take new files).
 * The probe is a name of this process's own: runs started at once, writing the same file, never
 * trip over each other's check.
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
            if (Files.exists(absolute) && !Files.isRegularFile(absolute)) {
                throw new IllegalArgumentException(flag + " " + file + " exists and is not a regular file");
            }
            Path parent = absolute.getParent();
            if (parent != null) {
                Files.createDirectories(parent);
            }
            Path probe = absolute.resolveSibling("." + absolute.getFileName() + "." + ProcessHandle.current().pid() + "-"
                    + System.nanoTime() + ".probe");
            Files.delete(Files.createFile(probe));
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
