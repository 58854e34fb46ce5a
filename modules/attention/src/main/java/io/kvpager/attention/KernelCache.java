package io.kvpager.attention;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.AtomicMoveNotSupportedException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Compiled modules of the kernel source, one per target architecture and option set: kept in
 * memory for the process and, where a directory is given, on disk under the SHA-256 of the
 * source, options and compiler, so a restart does not compile again. A file is written under a
 * temporary name and moved into place, so a process killed while writing leaves no half module.
 */
public final class KernelCache {

    /** The kernel's CUDA C source, in this package's resources. */
    public static final String SOURCE = "paged_decode.cu";

    /** Turns source into a module for one architecture; NVRTC in production. */
    @FunctionalInterface
    public interface Compiler {
        byte[] compile(String source, String name, List<String> options);
    }

    private final Compiler compiler;
    private final String compilerVersion;
    private final Path directory;
    private final Map<String, byte[]> modules = new ConcurrentHashMap<>();

    /**
     * @param directory where modules are kept across processes, or null for memory only
     */
    public KernelCache(Compiler compiler, String compilerVersion, Path directory) {
        this.compiler = compiler;
        this.compilerVersion = compilerVersion;
        this.directory = directory;
    }

    /** NVRTC, with modules on disk under {@code kvpager.kernelCache} or {@code ~/.cache/kvpager/kernels}. */
    public static KernelCache nvrtc() {
        String configured = System.getProperty("kvpager.kernelCache");
        Path directory = configured != null ? Path.of(configured)
                : Path.of(System.getProperty("user.home"), ".cache", "kvpager", "kernels");
        return new KernelCache(Nvrtc::compile, Nvrtc.version(), directory);
    }

    /** The module of the kernel source for {@code architecture} (e.g. {@code sm_90}) and {@code options}. */
    public byte[] module(String architecture, KernelOptions options) {
        List<String> all = new ArrayList<>(baseOptions(architecture));
        all.addAll(options.defines());
        return module(source(), SOURCE, all);
    }

    /**
     * The module of another kernel's CUDA C {@code source} (called {@code name} in the compiler's
     * messages) for {@code architecture}, compiled and kept as the attention kernel's are.
     */
    public byte[] module(String source, String name, String architecture) {
        return module(source, name, baseOptions(architecture));
    }

    /** How many modules this process holds in memory. */
    public int size() {
        return modules.size();
    }

    private static List<String> baseOptions(String architecture) {
        return List.of("--gpu-architecture=" + architecture, "-std=c++17");
    }

    private byte[] module(String source, String name, List<String> options) {
        String key = key(source, options);
        return modules.computeIfAbsent(key, k -> load(k).orElseGet(() -> store(k, compiler.compile(source, name, options))))
                .clone();
    }

    private Optional<byte[]> load(String key) {
        if (directory == null) {
            return Optional.empty();
        }
        Path file = directory.resolve(key + ".cubin");
        try {
            return Files.isRegularFile(file) ? Optional.of(Files.readAllBytes(file)) : Optional.empty();
        } catch (IOException e) {
            return Optional.empty();
        }
    }

    private byte[] store(String key, byte[] module) {
        if (directory == null) {
            return module;
        }
        try {
            Files.createDirectories(directory);
            Path temporary = Files.createTempFile(directory, key, ".part");
            Files.write(temporary, module);
            try {
                Files.move(temporary, directory.resolve(key + ".cubin"), StandardCopyOption.ATOMIC_MOVE);
            } catch (AtomicMoveNotSupportedException e) {
                Files.move(temporary, directory.resolve(key + ".cubin"), StandardCopyOption.REPLACE_EXISTING);
            }
        } catch (IOException e) {
            // A read-only home still compiles; the module just is not kept for the next process.
        }
        return module;
    }

    private String key(String source, List<String> options) {
        try {
            MessageDigest digest = MessageDigest.getInstance("SHA-256");
            digest.update(source.getBytes(StandardCharsets.UTF_8));
            digest.update((byte) 0);
            digest.update(String.join("\u0000", options).getBytes(StandardCharsets.UTF_8));
            digest.update((byte) 0);
            digest.update(compilerVersion.getBytes(StandardCharsets.UTF_8));
            return HexFormat.of().formatHex(digest.digest(), 0, 16);
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
    }

    /** The kernel source from this package's resources. */
    public static String source() {
        try (InputStream in = KernelCache.class.getResourceAsStream(SOURCE)) {
            if (in == null) {
                throw new IllegalStateException(SOURCE + " is missing from the classpath (kvpager-attention jar)");
            }
            return new String(in.readAllBytes(), StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
