package io.kvpager.cli;

import java.nio.ByteBuffer;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLEngine;
import javax.net.ssl.SSLException;

/**
 * The TLS context of a client command ({@code status}, {@code top}, {@code limit} with
 * {@code --tls-key-store}), begun on a thread of its own as the process starts, while the main
 * thread parses the command line and loads the rest of the command. In a fresh JVM the context is
 * most of what HTTPS costs over plain HTTP: a PKCS12 store's load runs its key derivations
 * (10,000 rounds each) before any of that code is compiled, and the first handshake loads and
 * initialises the TLS stack. Begun early, that work runs on the second core beside the command's
 * own start instead of after it.
 *
 * <p>The stores are read from the raw arguments, before picocli sees them, so they are only a
 * guess: {@link #take} hands the context over only when the command, once parsed, asks for exactly
 * the same stores and passwords; otherwise, or when building it failed, the command builds its own
 * and reports its own error. The thread is a daemon: a command that ends first (bad arguments, no
 * node) does not wait for it.
 */
final class EarlyClientTls {

    /** The stores and passwords a context is built from. */
    record Stores(String keyStore, String keyPassword, String trustStore, String trustPassword) {
    }

    private record Begun(Stores stores, CompletableFuture<SSLContext> context) {
    }

    private static volatile Begun begun;

    private EarlyClientTls() {
    }

    /**
     * Begins building the client context that {@code args} name when they are a client command's
     * with {@code --tls-key-store} and its password is in {@code env}; returns at once.
     */
    static void begin(String[] args, Map<String, String> env) {
        Stores stores = stores(args, env);
        if (stores == null) {
            return;
        }
        CompletableFuture<SSLContext> context = new CompletableFuture<>();
        begun = new Begun(stores, context);
        Thread thread = new Thread(() -> {
            SSLContext built;
            try {
                built = EndpointTls.buildClientContext(stores.keyStore(), stores.keyPassword(), stores.trustStore(), stores.trustPassword());
            } catch (RuntimeException e) {
                context.completeExceptionally(e);
                return;
            }
            context.complete(built);
            firstFlight(built);
        }, "kvpager-client-tls");
        thread.setDaemon(true);
        thread.start();
    }

    /**
     * The context begun for exactly {@code stores}, once built; {@code null} when none was begun
     * for them or building it failed (the caller then builds it and meets the failure itself).
     */
    static SSLContext take(Stores stores) {
        Begun started = begun;
        if (started == null || !started.stores().equals(stores)) {
            return null;
        }
        try {
            return started.context().join();
        } catch (CompletionException e) {
            return null;
        }
    }

    /** Forgets what was begun (for tests that begin again). */
    static void forget() {
        begun = null;
    }

    /** The stores of a client command's arguments, or {@code null} when they are not a client command's with a key store and its password. */
    static Stores stores(String[] args, Map<String, String> env) {
        if (args.length == 0 || !KvPager.CLIENT_COMMANDS.contains(args[0])) {
            return null;
        }
        String keyStore = value(args, "--tls-key-store");
        String keyPassword = env.get(ClusterOptions.KEY_STORE_PASSWORD);
        if (keyStore == null || keyPassword == null) {
            return null;
        }
        String trustStore = value(args, "--tls-trust-store");
        if (trustStore == null) {
            return new Stores(keyStore, keyPassword, keyStore, keyPassword);
        }
        String trustPassword = env.get(ClusterOptions.TRUST_STORE_PASSWORD);
        return trustPassword == null ? null : new Stores(keyStore, keyPassword, trustStore, trustPassword);
    }

    /** The value of {@code flag} ({@code --flag VALUE} or {@code --flag=VALUE}), the last one given, or {@code null}. */
    private static String value(String[] args, String flag) {
        String value = null;
        for (int i = 1; i < args.length; i++) {
            if (args[i].equals("--")) {
                break;
            }
            if (args[i].equals(flag) && i + 1 < args.length) {
                value = args[++i];
            } else if (args[i].startsWith(flag + "=")) {
                value = args[i].substring(flag.length() + 1);
            }
        }
        return value;
    }

    /**
     * Writes a client's first handshake message into a buffer that is thrown away: it loads and
     * initialises the handshake's classes and key exchange here, beside the command's start,
     * rather than in front of the first request. Nothing is sent.
     */
    private static void firstFlight(SSLContext context) {
        try {
            SSLEngine engine = context.createSSLEngine();
            engine.setUseClientMode(true);
            engine.beginHandshake();
            engine.wrap(ByteBuffer.allocate(0), ByteBuffer.allocate(engine.getSession().getPacketBufferSize()));
            engine.closeOutbound();
        } catch (SSLException | RuntimeException e) {
            // a head start only: the command's own handshake meets any real problem and reports it
        }
    }
}
