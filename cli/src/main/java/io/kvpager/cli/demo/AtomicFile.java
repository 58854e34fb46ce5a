package io.kvpager.cli.demo;

import java.io.IOException;
import java.io.OutputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;

/** A file written whole or not at all: the demo's charts. */
final class AtomicFile {

    private AtomicFile() {
    }

    /** What writes the file's bytes. */
    interface Writer {
        void write(OutputStream out) throws IOException;
    }

    /**
     * Writes beside {@code file} and moves the result over it: a write that fails leaves no empty or
     * partial file behind. The name beside is this process's own, created with the file's usual
     * permissions (a temporary file's are 0600).
     */
    static void write(Path file, Writer writer) throws IOException {
        Path parent = file.toAbsolutePath().getParent();
        if (parent != null) {
            Files.createDirectories(parent);
        }
        Path partial = file.resolveSibling("." + file.getFileName() + "." + ProcessHandle.current().pid() + "-" + System.nanoTime()
                + ".part");
        try {
            try (OutputStream out = Files.newOutputStream(partial)) {
                writer.write(out);
            }
            Files.move(partial, file, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
        } finally {
            Files.deleteIfExists(partial);
        }
    }
}
