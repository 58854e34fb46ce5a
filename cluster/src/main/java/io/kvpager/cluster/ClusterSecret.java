package io.kvpager.cluster;

import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.util.HexFormat;

/**
 * The secret every member of a cluster holds and no one else: what a node must know to join (the
 * Hazelcast cluster name derives from it) and the key of the MAC on the shared records that decide
 * memory. Certificates cannot be that secret: every node hands its own to anyone who opens its
 * event-bus port, in the TLS handshake. A secret given to each node like the store passwords works
 * whether the nodes share one key or each holds its own under a common CA, which a secret derived
 * from private key material would not.
 *
 * <p>Both uses are HMAC-SHA256 of the secret under a label of their own, so that the cluster name,
 * which Hazelcast's open-source member protocol sends in clear, tells nothing about the MAC key.
 */
final class ClusterSecret {

    /** The shortest secret taken: 16 bytes, 128 bits where it is random. */
    static final int MIN_BYTES = 16;

    private final byte[] secret;

    private ClusterSecret(byte[] secret) {
        this.secret = secret;
    }

    /**
     * The secret of {@code text} (its UTF-8 bytes, surrounding white space dropped).
     *
     * @throws IllegalArgumentException when it is shorter than {@value #MIN_BYTES} bytes
     */
    static ClusterSecret of(String text) {
        byte[] bytes = text == null ? new byte[0] : text.strip().getBytes(StandardCharsets.UTF_8);
        if (bytes.length < MIN_BYTES) {
            throw new IllegalArgumentException("the cluster secret must be at least " + MIN_BYTES + " bytes, got " + bytes.length
                    + "; make one with e.g. `openssl rand -base64 32`");
        }
        return new ClusterSecret(bytes);
    }

    /** The suffix of the name a node joins under: 16 hex digits of an HMAC over the cluster's name and certificates' fingerprint. */
    String nameSuffix(String clusterName, String fingerprint) {
        return HexFormat.of().formatHex(hmac("kvpager cluster name", clusterName, fingerprint == null ? "" : fingerprint)).substring(0, 16);
    }

    /** The key of the MAC on the shared records of {@code clusterName}. */
    byte[] bookKey(String clusterName) {
        return hmac("kvpager books", clusterName);
    }

    private byte[] hmac(String label, String... parts) {
        try {
            Mac mac = Mac.getInstance("HmacSHA256");
            mac.init(new SecretKeySpec(secret, "HmacSHA256"));
            update(mac, label);
            for (String part : parts) {
                update(mac, part);
            }
            return mac.doFinal();
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException("HMAC-SHA256 is not available: " + e.getMessage(), e);
        }
    }

    /** Each part with its length first, so that no two splits of the same text read alike. */
    private static void update(Mac mac, String part) {
        byte[] bytes = part.getBytes(StandardCharsets.UTF_8);
        mac.update(ByteBuffer.allocate(4).putInt(bytes.length).array());
        mac.update(bytes);
    }

    @Override
    public String toString() {
        return "ClusterSecret[***]";
    }
}
