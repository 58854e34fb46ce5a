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
 * <p>Hazelcast's open-source member protocol has no TLS. To keep a node without the cluster's
 * secret out of the membership too, a TLS node joins under a name derived from that secret and the
 * certificates it trusts ({@link ClusterSecret}): certificates are public (each node hands its own
 * over in every handshake), the secret is not. The name still travels in clear on the member
 * network, so the shared records that decide memory carry a MAC keyed by the secret as well.
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
     * The cluster name a node joins under: the options' name, and with a cluster secret 16 hex
     * digits of an HMAC keyed by the secret over the name and, with TLS, a fingerprint of the
     * certificates the node trusts ({@code llama-prod-3f9a0c...}). Without the secret no one can
     * compute it, however many certificates they hold.
     *
     * @throws IllegalArgumentException when a store cannot be read
     */
    static String clusterName(ClusterNodeOptions options) {
        if (options.getClusterSecret() == null) {
            return options.getClusterName();
        }
        String fingerprint = null;
        if (options.isTls()) {
            String path = options.getTrustStore() != null ? options.getTrustStore() : options.getKeyStore();
            String password = options.getTrustStore() != null ? options.getTrustStorePassword() : options.getKeyStorePassword();
            fingerprint = fingerprint(path, password);
        }
        return options.getClusterName() + "-" + ClusterSecret.of(options.getClusterSecret()).nameSuffix(options.getClusterName(), fingerprint);
    }

    /** The key of the MAC on the cluster's shared records, or {@code null} for a cluster without a secret. */
    static byte[] bookKey(ClusterNodeOptions options) {
        return options.getClusterSecret() == null ? null : ClusterSecret.of(options.getClusterSecret()).bookKey(options.getClusterName());
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
