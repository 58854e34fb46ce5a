package io.kvpager.attention;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_BYTE;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.SymbolLookup;
import java.lang.invoke.MethodHandle;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Optional;
import java.util.stream.Stream;

/**
 * The one owner of NVRTC, the CUDA toolkit's run-time compiler, through {@code java.lang.foreign}:
 * compiles CUDA C source to a CUBIN for the GPU that will run it.
 *
 * <p>The library is looked for once, on first use: the file named by the {@code kvpager.nvrtc}
 * system property or the {@code KVPAGER_NVRTC} environment variable if set; else
 * {@code libnvrtc.so.13} or {@code .so.12} on the loader's path; else in the toolkit's library
 * directories ({@code $CUDA_HOME}, {@code $CUDA_PATH}, {@code /usr/local/cuda*}), newest toolkit
 * first. Where none loads, {@link #unavailableReason()} says what was tried, and every compile
 * fails with that message.
 */
public final class Nvrtc {

    static final List<String> SONAMES = List.of("libnvrtc.so.13", "libnvrtc.so.12");

    private static final Linker LINKER = Linker.nativeLinker();
    private static final Loaded LOADED = load();

    private record Loaded(SymbolLookup lookup, Path path, String failure) {
    }

    private static final FunctionDescriptor STATUS_OF_ADDRESS = FunctionDescriptor.of(JAVA_INT, ADDRESS);
    private static final MethodHandle VERSION = handle("nvrtcVersion", FunctionDescriptor.of(JAVA_INT, ADDRESS, ADDRESS));
    private static final MethodHandle ERROR_STRING = handle("nvrtcGetErrorString", FunctionDescriptor.of(ADDRESS, JAVA_INT));
    private static final MethodHandle CREATE = handle("nvrtcCreateProgram",
            FunctionDescriptor.of(JAVA_INT, ADDRESS, ADDRESS, ADDRESS, JAVA_INT, ADDRESS, ADDRESS));
    private static final MethodHandle DESTROY = handle("nvrtcDestroyProgram", STATUS_OF_ADDRESS);
    private static final MethodHandle COMPILE = handle("nvrtcCompileProgram",
            FunctionDescriptor.of(JAVA_INT, ADDRESS, JAVA_INT, ADDRESS));
    private static final MethodHandle LOG_SIZE = handle("nvrtcGetProgramLogSize", FunctionDescriptor.of(JAVA_INT, ADDRESS, ADDRESS));
    private static final MethodHandle LOG = handle("nvrtcGetProgramLog", FunctionDescriptor.of(JAVA_INT, ADDRESS, ADDRESS));
    private static final MethodHandle CUBIN_SIZE = handle("nvrtcGetCUBINSize", FunctionDescriptor.of(JAVA_INT, ADDRESS, ADDRESS));
    private static final MethodHandle CUBIN = handle("nvrtcGetCUBIN", FunctionDescriptor.of(JAVA_INT, ADDRESS, ADDRESS));

    private Nvrtc() {
    }

    /** Why NVRTC cannot be used in this process, or empty when it can. */
    public static Optional<String> unavailableReason() {
        return Optional.ofNullable(LOADED.failure());
    }

    /** The library that was loaded. */
    public static Optional<Path> library() {
        return Optional.ofNullable(LOADED.path());
    }

    /** NVRTC's version, e.g. {@code "13.0"}. */
    public static String version() {
        requireLoaded();
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment major = arena.allocate(JAVA_INT);
            MemorySegment minor = arena.allocate(JAVA_INT);
            check("nvrtcVersion", (int) VERSION.invokeExact(major, minor));
            return major.get(JAVA_INT, 0) + "." + minor.get(JAVA_INT, 0);
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }

    /**
     * Compiles {@code source} (named {@code name} in messages) with {@code options}, which must
     * name a real architecture ({@code --gpu-architecture=sm_90}), and returns the CUBIN.
     *
     * @throws NvrtcException with NVRTC's log when the source does not compile
     * @throws IllegalStateException with {@link #unavailableReason()} where there is no NVRTC
     */
    public static byte[] compile(String source, String name, List<String> options) {
        requireLoaded();
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment program = arena.allocate(ADDRESS);
            check("nvrtcCreateProgram", (int) CREATE.invokeExact(program, arena.allocateFrom(source), arena.allocateFrom(name),
                    0, MemorySegment.NULL, MemorySegment.NULL));
            MemorySegment handle = program.get(ADDRESS, 0);
            try {
                MemorySegment argv = arena.allocate(ADDRESS, Math.max(1, options.size()));
                for (int i = 0; i < options.size(); i++) {
                    argv.setAtIndex(ADDRESS, i, arena.allocateFrom(options.get(i)));
                }
                int compiled = (int) COMPILE.invokeExact(handle, options.size(), argv);
                if (compiled != 0) {
                    throw new NvrtcException(name, errorString(compiled), options, log(arena, handle));
                }
                MemorySegment size = arena.allocate(JAVA_LONG);
                check("nvrtcGetCUBINSize", (int) CUBIN_SIZE.invokeExact(handle, size));
                MemorySegment cubin = arena.allocate(size.get(JAVA_LONG, 0));
                check("nvrtcGetCUBIN", (int) CUBIN.invokeExact(handle, cubin));
                return cubin.toArray(JAVA_BYTE);
            } finally {
                check("nvrtcDestroyProgram", (int) DESTROY.invokeExact(program));
            }
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }

    private static String log(Arena arena, MemorySegment handle) throws Throwable {
        MemorySegment size = arena.allocate(JAVA_LONG);
        check("nvrtcGetProgramLogSize", (int) LOG_SIZE.invokeExact(handle, size));
        MemorySegment text = arena.allocate(Math.max(1, size.get(JAVA_LONG, 0)));
        check("nvrtcGetProgramLog", (int) LOG.invokeExact(handle, text));
        return text.getString(0).strip();
    }

    private static void check(String call, int result) throws Throwable {
        if (result != 0) {
            throw new IllegalStateException(call + " failed: " + errorString(result));
        }
    }

    private static String errorString(int result) throws Throwable {
        MemorySegment text = (MemorySegment) ERROR_STRING.invokeExact(result);
        return text.equals(MemorySegment.NULL) ? "nvrtcResult " + result : text.reinterpret(256).getString(0);
    }

    private static void requireLoaded() {
        if (LOADED.failure() != null) {
            throw new IllegalStateException(LOADED.failure());
        }
    }

    private static RuntimeException rethrow(Throwable t) {
        if (t instanceof RuntimeException e) {
            return e;
        }
        if (t instanceof Error e) {
            throw e;
        }
        return new IllegalStateException(t);
    }

    private static MethodHandle handle(String symbol, FunctionDescriptor descriptor) {
        if (LOADED.lookup() == null) {
            return null;
        }
        return LINKER.downcallHandle(LOADED.lookup().find(symbol).orElseThrow(
                () -> new IllegalStateException(LOADED.path() + " has no " + symbol)), descriptor);
    }

    private static Loaded load() {
        List<String> tried = new ArrayList<>();
        String configured = System.getProperty("kvpager.nvrtc", System.getenv("KVPAGER_NVRTC"));
        if (configured != null && !configured.isBlank()) {
            Path path = Path.of(configured);
            try {
                return new Loaded(SymbolLookup.libraryLookup(path, Arena.global()), path, null);
            } catch (IllegalArgumentException e) {
                return new Loaded(null, null, "NVRTC not found: kvpager.nvrtc / KVPAGER_NVRTC names " + configured
                        + ", which does not load (" + e.getMessage() + ")");
            }
        }
        for (String soname : SONAMES) {
            try {
                return new Loaded(SymbolLookup.libraryLookup(soname, Arena.global()), Path.of(soname), null);
            } catch (IllegalArgumentException e) {
                tried.add(soname + " on the loader path");
            }
        }
        for (Path dir : toolkitDirectories()) {
            for (String soname : SONAMES) {
                Path candidate = dir.resolve(soname);
                if (Files.isRegularFile(candidate)) {
                    try {
                        return new Loaded(SymbolLookup.libraryLookup(candidate, Arena.global()), candidate, null);
                    } catch (IllegalArgumentException e) {
                        tried.add(candidate + " (" + e.getMessage() + ")");
                    }
                }
            }
            tried.add(dir.toString());
        }
        return new Loaded(null, null, "NVRTC not found: the CUDA toolkit's run-time compiler (libnvrtc.so.13 or .so.12) "
                + "is needed to compile the attention kernel; tried " + String.join(", ", tried)
                + "; install the CUDA toolkit or point -Dkvpager.nvrtc / KVPAGER_NVRTC at the library");
    }

    /** Where toolkits keep their libraries, newest toolkit first. */
    static List<Path> toolkitDirectories() {
        List<Path> roots = new ArrayList<>();
        for (String variable : List.of("CUDA_HOME", "CUDA_PATH")) {
            String value = System.getenv(variable);
            if (value != null && !value.isBlank()) {
                roots.add(Path.of(value));
            }
        }
        roots.add(Path.of("/usr/local/cuda"));
        try (Stream<Path> installed = Files.list(Path.of("/usr/local"))) {
            installed.filter(p -> p.getFileName().toString().startsWith("cuda-"))
                    .sorted(Comparator.comparing((Path p) -> p.getFileName().toString()).reversed())
                    .forEach(roots::add);
        } catch (IOException | RuntimeException e) {
            // no /usr/local to list: the other places still count
        }
        List<Path> dirs = new ArrayList<>();
        for (Path root : roots) {
            dirs.add(root.resolve("lib64"));
            dirs.add(root.resolve("targets/x86_64-linux/lib"));
            dirs.add(root.resolve("targets/sbsa-linux/lib"));
        }
        dirs.add(Path.of("/usr/lib/x86_64-linux-gnu"));
        return dirs;
    }
}
