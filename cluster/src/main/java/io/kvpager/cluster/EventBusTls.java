package io.kvpager.cluster;

import io.vertx.core.eventbus.EventBusOptions;
import io.vertx.core.http.ClientAuth;
import io.vertx.core.net.JksOptions;
import io.vertx.core.net.KeyStoreOptionsBase;
import io.vertx.core.net.PfxOptions;

import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.KeyStore;
import java.security.MessageDigest;
import java.security.cert.Certificate;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HexFormat;
import java.util.List;

/**
 * TLS for the event bus between nodes: each node presents its certificate from its key store and
 * accepts only peers whose certificate its trust store vouches for, in both directions (client
 * certificates are required), so a process without the cluster's key material can neither send
 * to a rank nor receive from one. Vert.x's cluster client checks the peer's chain, not its host
 * name, so one certificate may serve every node of a cluster.
 *
 * <p>Hazelcast's open-source member protocol has no TLS. To keep a node without the certificates
 * out of the membership too, a TLS node joins under its cluster name suffixed with a fingerprint
 * of the certificates it trusts: a node that does not hold them does not know the name, and a
 * node that trusts other certificates joins another cluster. That is a name, not a proof; the
 * member traffic (the shared data of the GPU brokers among it) must stay on a private network.
 */
final class EventBusTls {

    private EventBusTls() {
    }

    /**
     * Turns TLS on in {@code bus} with the options' stores, client certificates required.
     *
     * @throws IllegalArgumentException when the key store cannot be read with its password or
     *     holds no private key: checked here, since the event bus would fail without saying which
     */
    static void apply(EventBusOptions bus, ClusterNodeOptions options) {
        requireKey(options.getKeyStore(), options.getKeyStorePassword());
        KeyStoreOptionsBase key = store(options.getKeyStore(), options.getKeyStorePassword());
        KeyStoreOptionsBase trust = options.getTrustStore() == null ? key
                : store(options.getTrustStore(), options.getTrustStorePassword());
        bus.setSsl(true).setKeyCertOptions(key).setTrustOptions(trust).setClientAuth(ClientAuth.REQUIRED);
    }

    /**
     * The cluster name a node joins under: the options' name, and with TLS a fingerprint of the
     * certificates the node trusts ({@code llama-prod-3f9a0c...}).
     *
     * @throws IllegalArgumentException when a store cannot be read
     */
    static String clusterName(ClusterNodeOptions options) {
        if (!options.isTls()) {
            return options.getClusterName();
        }
        String path = options.getTrustStore() != null ? options.getTrustStore() : options.getKeyStore();
        String password = options.getTrustStore() != null ? options.getTrustStorePassword() : options.getKeyStorePassword();
        return options.getClusterName() + "-" + fingerprint(path, password);
    }

    private static void requireKey(String path, String password) {
        try (InputStream in = Files.newInputStream(Path.of(path))) {
            KeyStore store = KeyStore.getInstance(type(path));
            store.load(in, password.toCharArray());
            for (String alias : Collections.list(store.aliases())) {
                if (store.isKeyEntry(alias)) {
                    return;
                }
            }
            throw new IllegalArgumentException("the key store " + path + " holds no private key for this node");
        } catch (IOException | GeneralSecurityException e) {
            throw new IllegalArgumentException("cannot read the key store " + path + " with its password: " + e.getMessage(), e);
        }
    }

    /** The first 16 hex digits of SHA-256 over the sorted SHA-256 digests of the store's trusted certificates. */
    static String fingerprint(String path, String password) {
        try (InputStream in = Files.newInputStream(Path.of(path))) {
            KeyStore store = KeyStore.getInstance(type(path));
            store.load(in, password.toCharArray());
            List<String> digests = new ArrayList<>();
            for (String alias : Collections.list(store.aliases())) {
                Certificate cert = store.getCertificate(alias);
                if (cert != null) {
                    digests.add(HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(cert.getEncoded())));
                }
            }
            if (digests.isEmpty()) {
                throw new IllegalArgumentException(path + " holds no certificate");
            }
            Collections.sort(digests);
            byte[] all = MessageDigest.getInstance("SHA-256").digest(String.join(",", digests).getBytes(java.nio.charset.StandardCharsets.US_ASCII));
            return HexFormat.of().formatHex(all).substring(0, 16);
        } catch (IOException | GeneralSecurityException e) {
            throw new IllegalArgumentException("cannot read the certificates of " + path + ": " + e.getMessage(), e);
        }
    }

    /**
     * The store as the event bus takes it: its options travel as JSON to the server and client it
     * makes, which carry the PKCS12 and JKS kinds (not the generic key store options).
     */
    private static KeyStoreOptionsBase store(String path, String password) {
        if (!Files.isReadable(Path.of(path))) {
            throw new IllegalArgumentException("cannot read the key store " + Path.of(path).toAbsolutePath());
        }
        return "JKS".equals(type(path)) ? new JksOptions().setPath(path).setPassword(password)
                : new PfxOptions().setPath(path).setPassword(password);
    }

    private static String type(String path) {
        return path.toLowerCase(java.util.Locale.ROOT).endsWith(".jks") ? "JKS" : "PKCS12";
    }
}
