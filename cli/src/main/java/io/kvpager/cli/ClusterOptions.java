package io.kvpager.cli;

import io.kvpager.cluster.ClusterNodeOptions;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import picocli.CommandLine.Option;

/**
 * Where a clustered node listens and which cluster it joins: the options of a
 * {@link ClusterNodeOptions}. Key-store passwords never travel on the command line (where
 * {@code ps} shows them): they are read from {@value #KEY_STORE_PASSWORD} and
 * {@value #TRUST_STORE_PASSWORD}.
 */
final class ClusterOptions {

    static final String KEY_STORE_PASSWORD = "KVPAGER_TLS_KEY_STORE_PASSWORD";
    static final String TRUST_STORE_PASSWORD = "KVPAGER_TLS_TRUST_STORE_PASSWORD";

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

    /**
     * The node options these flags describe, with passwords from {@code env}.
     *
     * @throws IllegalArgumentException naming the flag of a bad value, or the missing password variable
     */
    ClusterNodeOptions nodeOptions(Map<String, String> env) {
        ClusterNodeOptions options = new ClusterNodeOptions();
        flag("--cluster-name", () -> options.setClusterName(name));
        flag("--cluster-host", () -> options.setHost(host));
        flag("--cluster-port", () -> options.setPort(port));
        flag("--cluster-member-port", () -> options.setMemberPort(memberPort));
        flag("--cluster-join", () -> options.setMembers(join.isEmpty() ? List.of(host) : join));
        flag("--cluster-config", () -> options.setConfig(config));
        if (keyStore != null) {
            options.setKeyStore(keyStore).setKeyStorePassword(password(env, KEY_STORE_PASSWORD, "--tls-key-store"));
        }
        if (trustStore != null) {
            if (keyStore == null) {
                throw new IllegalArgumentException("--tls-trust-store needs --tls-key-store: TLS needs this node's own key too");
            }
            options.setTrustStore(trustStore).setTrustStorePassword(password(env, TRUST_STORE_PASSWORD, "--tls-trust-store"));
        }
        return options.validate();
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
