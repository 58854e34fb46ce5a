package io.kvpager.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The {@code ./kvpager} launcher as a new user meets it: a fresh copy of the repository (no
 * {@code target/}), three commands started at the same instant, each of which finds the jar
 * missing. One builds, the others wait for it, and all three succeed without a JDK warning; then
 * the launcher runs through a symlink from another folder and passes {@code KVPAGER_OPTS} to the
 * JVM. Runs a real Maven build of the copy (a minute or two).
 */
class LauncherTest {

    private static final Set<String> NOT_COPIED = Set.of("target", ".git", ".idea", ".vscode", "out");
    private static final long BUILD_TIMEOUT_S = 600;

    record Outcome(int exitCode, String out, String err) {
    }

    @Test
    void threeCommandsAtOnceOnAFreshCopyBuildOnceAndAllSucceed(@TempDir Path temp) throws Exception {
        Path repo = temp.resolve("repo");
        copyRepository(repositoryRoot(), repo);
        assertThat(repo.resolve("cli/target")).doesNotExist();

        List<Process> started = new ArrayList<>();
        for (int i = 0; i < 3; i++) {
            started.add(start(repo.resolve("kvpager"), temp.resolve("run" + i), Map.of(), "--version"));
        }
        List<Outcome> outcomes = new ArrayList<>();
        for (int i = 0; i < started.size(); i++) {
            outcomes.add(finish(started.get(i), temp.resolve("run" + i)));
        }

        for (Outcome outcome : outcomes) {
            assertThat(outcome.exitCode()).as("exit code; stderr:%n%s", outcome.err()).isZero();
            assertThat(outcome.out()).startsWith("kvpager 0.1.0-SNAPSHOT");
            assertThat(outcome.err()).doesNotContain("WARNING").doesNotContain("failed");
        }
        assertThat(outcomes.stream().filter(o -> o.err().contains("kvpager: building")).count()).as("builds").isEqualTo(1);

        Path bin = Files.createDirectories(temp.resolve("bin"));
        Path link = Files.createSymbolicLink(bin.resolve("kvpager"), repo.resolve("kvpager"));
        Outcome viaLink = finish(start(link, temp.resolve("link"), Map.of("KVPAGER_OPTS", "-XshowSettings:properties -Dkvpager.probe=through-the-link"),
                "--version"), temp.resolve("link"));
        assertThat(viaLink.exitCode()).as("stderr:%n%s", viaLink.err()).isZero();
        assertThat(viaLink.out()).startsWith("kvpager 0.1.0-SNAPSHOT");
        assertThat(viaLink.err()).contains("kvpager.probe = through-the-link").doesNotContain("kvpager: building");

        // A JAVA_HOME of JDK 17 is passed over for the JDK 25 on PATH, its version read from its release file: its java
        // is never started, not even to ask its version.
        Path jdk17 = Files.createDirectories(temp.resolve("jdk17/bin")).getParent();
        Files.writeString(jdk17.resolve("release"), "JAVA_VERSION=\"17.0.9\"\n");
        Path fakeJava = Files.writeString(jdk17.resolve("bin/java"), "#!/bin/sh\ntouch \"$0.ran\"\nexit 1\n");
        assertThat(fakeJava.toFile().setExecutable(true)).isTrue();
        Path java25 = Path.of(System.getProperty("java.home"), "bin");
        Outcome past17 = finish(start(repo.resolve("kvpager"), temp.resolve("past17"),
                Map.of("JAVA_HOME", jdk17.toString(), "PATH", java25 + ":" + System.getenv("PATH")), "--version"), temp.resolve("past17"));
        assertThat(past17.exitCode()).as("stderr:%n%s", past17.err()).isZero();
        assertThat(past17.out()).startsWith("kvpager 0.1.0-SNAPSHOT");
        assertThat(jdk17.resolve("bin/java.ran")).as("the JDK 17's java was started").doesNotExist();
    }

    private static Path repositoryRoot() {
        Path root = Path.of("").toAbsolutePath().getParent();
        assertThat(root.resolve("kvpager")).as("the launcher at the repository root").isRegularFile();
        return root;
    }

    /** What a clone holds: everything but build output and tool folders. */
    private static void copyRepository(Path from, Path to) throws IOException {
        try (Stream<Path> files = Files.walk(from)) {
            for (Path file : (Iterable<Path>) files::iterator) {
                Path relative = from.relativize(file);
                if (relative.toString().isEmpty()) {
                    continue;
                }
                boolean skipped = false;
                for (Path part : relative) {
                    String name = part.toString();
                    if (NOT_COPIED.contains(name) || name.startsWith(".gpu") || name.endsWith(".lock") || name.endsWith(".png")) {
                        skipped = true;
                        break;
                    }
                }
                if (skipped || Files.isSymbolicLink(file)) {
                    continue;
                }
                Path target = to.resolve(relative.toString());
                if (Files.isDirectory(file)) {
                    Files.createDirectories(target);
                } else {
                    Files.createDirectories(target.getParent());
                    Files.copy(file, target, java.nio.file.StandardCopyOption.COPY_ATTRIBUTES);
                }
            }
        }
    }

    private static Process start(Path launcher, Path outputs, Map<String, String> env, String... args) throws IOException {
        Files.createDirectories(outputs);
        List<String> command = new ArrayList<>(List.of(launcher.toString()));
        command.addAll(List.of(args));
        ProcessBuilder builder = new ProcessBuilder(command).directory(outputs.toFile())
                .redirectOutput(outputs.resolve("out").toFile()).redirectError(outputs.resolve("err").toFile());
        builder.environment().put("JAVA_HOME", System.getProperty("java.home"));
        builder.environment().remove("KVPAGER_OPTS");
        builder.environment().remove("JAVA_OPTS");
        builder.environment().putAll(env);
        return builder.start();
    }

    private static Outcome finish(Process process, Path outputs) throws Exception {
        if (!process.waitFor(BUILD_TIMEOUT_S, TimeUnit.SECONDS)) {
            process.destroyForcibly();
            throw new AssertionError("the launcher did not finish within " + BUILD_TIMEOUT_S + " s; stderr:\n"
                    + Files.readString(outputs.resolve("err"), StandardCharsets.UTF_8));
        }
        return new Outcome(process.exitValue(), Files.readString(outputs.resolve("out"), StandardCharsets.UTF_8),
                Files.readString(outputs.resolve("err"), StandardCharsets.UTF_8));
    }
}
