package io.kvpager.cli;

import io.kvpager.cluster.ClusterNodeOptions;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import picocli.CommandLine.Option;

/**
 * Where a clustered node listens and which cluster it joins: the options of a
 * {@link ClusterNodeOptions}. Key-store passwords never travel on the command line (where
 * {@code ps} shows them): they are read from {@value #KEY_STORE_PASSWORD} and
 * {@value #TRUST_STORE_PASSWORD}; nor does the cluster secret, read from a file or
 * {@value #CLUSTER_SECRET}.
 */
final class ClusterOptions {

    static final String KEY_STORE_PASSWORD = "KVPAGER_TLS_KEY_STORE_PASSWORD";
    static final String TRUST_STORE_PASSWORD = "KVPAGER_TLS_TRUST_STORE_PASSWORD";
    static final String CLUSTER_SECRET = "KVPAGER_CLUSTER_SECRET";

    @Option(names = "--cluster-host", paramLabel = "HOST", defaultValue = "127.0.0.1",
            description = "IP address this node's event bus and cluster member bind (default: ${DEFAULT-VALUE}).")
    String host;

    @Option(names = "--cluster-port", paramLabel = "PORT", defaultValue = "0",
            description = "Event-bus port, 0 for any free one (default: ${DEFAULT-VALUE}).")
    int port;

    @Option(names = "--cluster-name", paramLabel = "NAME", defaultValue = "kvpager",
            description = "Cluster to join; nodes with other names never see each other. Give each cache deployment its own (default: ${DEFAULT-VALUE}).")
    String name;

    @Option(names = "--cluster-member-port", paramLabel = "PORT", defaultValue = "5701",
            description = "First port the cluster member tries; it takes the first free one from there (default: ${DEFAULT-VALUE}).")
    // initialised as the default too: status, top and limit drop the member flags, and with them picocli's defaults
    int memberPort = 5701;

    @Option(names = "--cluster-join", paramLabel = "IP[:PORT]", split = ",",
            description = "Members to join through, comma-separated; any one that is up is enough (default: the cluster host, ports 5701-5703).")
    List<String> join = new ArrayList<>();

    @Option(names = "--cluster-quorum", paramLabel = "N", defaultValue = "1",
            description = "Fewest members a side of the cluster needs to write the GPU budgets, the instance directory and the limits;"
                    + " give every node a majority of the cluster's nodes (2 for a coordinator and two workers); 1 turns it off (default: ${DEFAULT-VALUE}).")
    // initialised as the default too, as the member port: clients drop the member flags
    int quorum = 1;

    @Option(names = "--cluster-config", paramLabel = "FILE",
            description = "Hazelcast XML config instead of the packaged config/cluster.xml.")
    String config;

    @Option(names = "--tls-key-store", paramLabel = "FILE",
            description = "This node's key and certificate (PKCS12, or JKS for .jks): the event bus runs over TLS with client certificates; password in $"
                    + KEY_STORE_PASSWORD + ".")
    String keyStore;

    @Option(names = "--tls-trust-store", paramLabel = "FILE",
            description = "Certificates to trust (default: the key store's own); password in $" + TRUST_STORE_PASSWORD + ".")
    String trustStore;

    @Option(names = "--cluster-secret-file", paramLabel = "FILE",
            description = "The secret every node of the cluster holds (at least 16 bytes; surrounding white space dropped): the name nodes join "
                    + "under and the MAC on the shared records derive from it. Required with --tls-key-store (default: $" + CLUSTER_SECRET + ").")
    String secretFile;

    /**
     * The node options these flags describe, with passwords from {@code env}.
     *
     * @throws IllegalArgumentException naming the flag of a bad value, or the missing password variable
     */
    ClusterNodeOptions nodeOptions(Map<String, String> env) {
        ClusterNodeOptions options = addresses();
        if (keyStore != null) {
            options.setKeyStore(keyStore).setKeyStorePassword(password(env, KEY_STORE_PASSWORD, "--tls-key-store"));
        }
        if (trustStore != null) {
            if (keyStore == null) {
                throw new IllegalArgumentException("--tls-trust-store needs --tls-key-store: TLS needs this node's own key too");
            }
            options.setTrustStore(trustStore).setTrustStorePassword(password(env, TRUST_STORE_PASSWORD, "--tls-trust-store"));
        }
        String secret = secret(env);
        if (secret != null) {
            flag(secretFile != null ? "--cluster-secret-file" : "$" + CLUSTER_SECRET, () -> options.setClusterSecret(secret));
        } else if (keyStore != null) {
            throw new IllegalArgumentException("--tls-key-store needs the cluster secret, in --cluster-secret-file or $" + CLUSTER_SECRET
                    + ": every node hands its certificate to anyone who opens its event-bus port, so certificates alone would let a stranger"
                    + " join the membership and write the cluster's shared records (make a secret with e.g. `openssl rand -base64 32`"
                    + " and give every node the same one)");
        }
        return options.validate();
    }

    /**
     * The cluster's name, for a client that asks a node (which needs no secret); checks the
     * address flags as a node would.
     *
     * @throws IllegalArgumentException for a bad flag, naming it
     */
    String clusterName() {
        return addresses().getClusterName();
    }

    /** The node options of the name and address flags. */
    private ClusterNodeOptions addresses() {
        ClusterNodeOptions options = new ClusterNodeOptions();
        flag("--cluster-name", () -> options.setClusterName(name));
        flag("--cluster-host", () -> options.setHost(host));
        flag("--cluster-port", () -> options.setPort(port));
        flag("--cluster-member-port", () -> options.setMemberPort(memberPort));
        flag("--cluster-join", () -> options.setMembers(join.isEmpty() ? List.of(host) : join));
        flag("--cluster-quorum", () -> options.setQuorum(quorum));
        flag("--cluster-config", () -> options.setConfig(config));
        return options;
    }

    /** The cluster secret: the file's text, else the variable's, else {@code null}. */
    private String secret(Map<String, String> env) {
        if (secretFile == null) {
            return env.get(CLUSTER_SECRET);
        }
        try {
            return Files.readString(Path.of(secretFile), StandardCharsets.UTF_8);
        } catch (IOException | RuntimeException e) {
            throw new IllegalArgumentException("--cluster-secret-file: cannot read " + secretFile + ": " + e.getMessage(), e);
        }
    }

    /**
     * The TLS a client of a node's endpoint presents: this key store, checked against the trust
     * store, or {@code null} without {@code --tls-key-store}. A client needs no cluster secret: the
     * node checks its certificate.
     *
     * @throws IllegalArgumentException for a store that does not read, or a missing password variable
     */
    javax.net.ssl.SSLContext clientTls(Map<String, String> env) {
        return clientTls(env, null);
    }

    /**
     * As {@link #clientTls(Map)}, taking the context {@code early} built for these stores while the
     * command line was parsed, when it was ({@code early} may be {@code null}).
     */
    javax.net.ssl.SSLContext clientTls(Map<String, String> env, EarlyClientTls early) {
        if (keyStore == null) {
            if (trustStore != null) {
                throw new IllegalArgumentException("--tls-trust-store needs --tls-key-store: the node asks for a client certificate");
            }
            return null;
        }
        javax.net.ssl.SSLContext built = early == null ? null : early.take(keyStore, trustStore);
        return built != null ? built : clientTls(keyStore, trustStore, env);
    }

    /**
     * A client's TLS from {@code keyStore}, checked against {@code trustStore} ({@code null}: the
     * key store's own certificates), their passwords from {@code env}.
     *
     * @throws IllegalArgumentException for a store that does not read, or a missing password variable
     */
    static javax.net.ssl.SSLContext clientTls(String keyStore, String trustStore, Map<String, String> env) {
        String keyPassword = password(env, KEY_STORE_PASSWORD, "--tls-key-store");
        return EndpointTls.clientContext(keyStore, keyPassword, trustStore == null ? keyStore : trustStore,
                trustStore == null ? keyPassword : password(env, TRUST_STORE_PASSWORD, "--tls-trust-store"));
    }

    private static void flag(String flag, Runnable set) {
        try {
            set.run();
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException(flag + ": " + e.getMessage(), e);
        }
    }

    private static String password(Map<String, String> env, String variable, String flag) {
        String password = env.get(variable);
        if (password == null) {
            throw new IllegalArgumentException(flag + " needs its password in the environment variable " + variable);
        }
        return password;
    }

    @Override
    public String toString() {
        return "cluster '" + name + "' at " + host + ":" + (port == 0 ? "any port" : port) + (keyStore != null ? " over TLS" : "");
    }
}
