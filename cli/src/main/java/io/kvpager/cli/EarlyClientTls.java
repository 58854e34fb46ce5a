package io.kvpager.cli;

import io.kvpager.cli.status.ClientSockets;
import java.nio.ByteBuffer;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLEngine;
import javax.net.ssl.SSLEngineResult.HandshakeStatus;
import javax.net.ssl.SSLException;
import javax.net.ssl.SSLParameters;

/**
 * The TLS context of a client command ({@code status}, {@code top}, {@code limit} with
 * {@code --tls-key-store}), built on a thread of its own from {@code main} while the command line
 * is parsed and the command set up. Reading a PKCS12 store runs two 10,000-round key derivations
 * and checks its certificate's signature, the TLS context then loads JSSE: CPU work that nothing
 * else in a client command waits for until its first request, so a second core does it meanwhile.
 * That thread then rehearses a handshake in memory, this context against itself (a client that
 * offers X25519 alone, as the command's sockets do, and a server that asks for its certificate):
 * the first handshake in a JVM spends most of its time initialising JSSE's classes and running
 * its crypto code cold, and the command's handshake with the node finds both done.
 *
 * <p>The arguments are only looked through here, not parsed: the context built early is used when
 * the parsed command names exactly the stores it was built from, and is dropped otherwise (the
 * command then builds its own, as without this class). A store that does not read fails here with
 * the message the command's own build would give, and that failure is the command's.
 */
final class EarlyClientTls {

    private static final String KEY_STORE_FLAG = "--tls-key-store";
    private static final String TRUST_STORE_FLAG = "--tls-trust-store";

    private final String keyStore;
    private final String trustStore;
    private final CompletableFuture<SSLContext> context = new CompletableFuture<>();

    private EarlyClientTls(String keyStore, String trustStore) {
        this.keyStore = keyStore;
        this.trustStore = trustStore;
    }

    private void build(Map<String, String> env) {
        SSLContext built;
        try {
            built = ClusterOptions.clientTls(keyStore, trustStore, env);
        } catch (RuntimeException | Error e) {
            context.completeExceptionally(e);
            return;
        }
        context.complete(built);
        rehearse(built);
    }

    /**
     * Starts building the context when {@code args} run a client command with
     * {@code --tls-key-store}; {@code null} otherwise (another command, no TLS, a password
     * variable missing: the command itself says what is wrong).
     */
    static EarlyClientTls start(String[] args, Map<String, String> env) {
        if (args.length == 0 || !KvPager.CLIENT_COMMANDS.contains(args[0])) {
            return null;
        }
        String keyStore = value(args, KEY_STORE_FLAG);
        String trustStore = value(args, TRUST_STORE_FLAG);
        if (keyStore == null || env.get(ClusterOptions.KEY_STORE_PASSWORD) == null
                || trustStore != null && env.get(ClusterOptions.TRUST_STORE_PASSWORD) == null) {
            return null;
        }
        EarlyClientTls early = new EarlyClientTls(keyStore, trustStore);
        Thread.ofPlatform().name("kvpager-client-tls").daemon().start(() -> early.build(env));
        return early;
    }

    /**
     * The context built for exactly these stores ({@code trustStore} {@code null}: the key store's
     * own), waiting for it; {@code null} when this one was built for others.
     *
     * @throws IllegalArgumentException as the build for these stores threw it
     */
    SSLContext take(String keyStore, String trustStore) {
        if (!this.keyStore.equals(keyStore) || !Objects.equals(this.trustStore, trustStore)) {
            return null;
        }
        try {
            return context.get();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted while reading " + keyStore, e);
        } catch (ExecutionException e) {
            if (e.getCause() instanceof RuntimeException failure) {
                throw failure;
            }
            throw new IllegalStateException("cannot set up TLS with " + keyStore + ": " + e.getCause(), e.getCause());
        }
    }

    /**
     * A TLS handshake of {@code context} with itself, in memory; {@code false} when it did not
     * complete (a trust store that does not vouch for the key store's own certificate: the
     * command's handshake with a node is the one that counts).
     */
    static boolean rehearse(SSLContext context) {
        try {
            SSLEngine client = context.createSSLEngine();
            client.setUseClientMode(true);
            SSLParameters offer = client.getSSLParameters();
            // the one group the command's sockets offer , so that its code is what gets warmed
            offer.setNamedGroups(new String[] {ClientSockets.GROUP});
            client.setSSLParameters(offer);
            SSLEngine server = context.createSSLEngine();
            server.setUseClientMode(false);
            server.setNeedClientAuth(true);
            int packet = client.getSession().getPacketBufferSize();
            int application = client.getSession().getApplicationBufferSize();
            ByteBuffer toServer = ByteBuffer.allocate(packet);
            ByteBuffer toClient = ByteBuffer.allocate(packet);
            ByteBuffer clientData = ByteBuffer.allocate(application);
            ByteBuffer serverData = ByteBuffer.allocate(application);
            client.beginHandshake();
            server.beginHandshake();
            // a TLS 1.3 handshake takes a few flights; the bound only stops an engine that never finishes
            for (int step = 0; step < 64; step++) {
                boolean clientMoved = advance(client, toServer, toClient, clientData);
                boolean serverMoved = advance(server, toClient, toServer, serverData);
                if (!clientMoved && !serverMoved) {
                    return client.getHandshakeStatus() == HandshakeStatus.NOT_HANDSHAKING && client.getSession().isValid()
                            && client.getSession().getPeerCertificates().length > 0;
                }
            }
            return false;
        } catch (SSLException | RuntimeException e) {
            return false;
        }
    }

    /** One step of {@code engine}'s handshake: writes to {@code out}, reads from {@code in} (both left in write mode); whether it did anything. */
    private static boolean advance(SSLEngine engine, ByteBuffer out, ByteBuffer in, ByteBuffer data) throws SSLException {
        return switch (engine.getHandshakeStatus()) {
            case NEED_TASK -> {
                for (Runnable task = engine.getDelegatedTask(); task != null; task = engine.getDelegatedTask()) {
                    task.run();
                }
                yield true;
            }
            case NEED_WRAP -> engine.wrap(ByteBuffer.allocate(0), out).bytesProduced() > 0
                    || engine.getHandshakeStatus() != HandshakeStatus.NEED_WRAP;
            case NEED_UNWRAP, NEED_UNWRAP_AGAIN -> {
                in.flip();
                int read = engine.unwrap(in, data).bytesConsumed();
                in.compact();
                data.clear();
                yield read > 0;
            }
            case FINISHED, NOT_HANDSHAKING -> false;
        };
    }

    /** The value of {@code flag} as picocli reads it ({@code --flag VALUE} or {@code --flag=VALUE}, the last one), before any {@code --}. */
    private static String value(String[] args, String flag) {
        String found = null;
        for (int i = 1; i < args.length && !"--".equals(args[i]); i++) {
            if (args[i].equals(flag) && i + 1 < args.length) {
                found = args[++i];
            } else if (args[i].startsWith(flag + "=")) {
                found = args[i].substring(flag.length() + 1);
            }
        }
        return found;
    }
}
