package io.kvpager.cli;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/** PKCS12 key stores for the TLS tests, made by the running JDK's {@code keytool}. */
final class TestKeyStores {

    private TestKeyStores() {
    }

    /** An Ed25519 key pair with a self-signed certificate for {@code cn}, in a new store at {@code store}. */
    static void ed25519(String store, String cn, String password) throws IOException, InterruptedException {
        keyPair(store, cn, password, "-keyalg", "Ed25519");
    }

    /** An EC P-256 key pair with a self-signed certificate for {@code cn}, in a new store at {@code store}. */
    static void p256(String store, String cn, String password) throws IOException, InterruptedException {
        keyPair(store, cn, password, "-keyalg", "EC", "-groupname", "secp256r1");
    }

    private static void keyPair(String store, String cn, String password, String... algorithm) throws IOException, InterruptedException {
        List<String> command = new ArrayList<>();
        command.add(Path.of(System.getProperty("java.home"), "bin", "keytool").toString());
        command.addAll(List.of("-genkeypair", "-alias", "node"));
        command.addAll(List.of(algorithm));
        command.addAll(List.of("-dname", "CN=" + cn, "-validity", "2", "-storetype", "PKCS12", "-keystore", store,
                "-storepass", password, "-keypass", password));
        Process process = new ProcessBuilder(command).redirectErrorStream(true).start();
        String output = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        if (!process.waitFor(60, TimeUnit.SECONDS) || process.exitValue() != 0) {
            throw new IllegalStateException("keytool -genkeypair for " + store + " failed: " + output);
        }
    }
}
