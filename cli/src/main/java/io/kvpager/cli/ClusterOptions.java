package io.kvpager.cli;

import picocli.CommandLine.Option;

/** Where a clustered node listens and which cluster it joins. */
final class ClusterOptions {

    @Option(names = "--cluster-host", paramLabel = "HOST", defaultValue = "127.0.0.1",
            description = "Address this node's event bus listens on (default: ${DEFAULT-VALUE}).")
    String host;

    @Option(names = "--cluster-port", paramLabel = "PORT", defaultValue = "0",
            description = "Event-bus port, 0 for any free one (default: ${DEFAULT-VALUE}).")
    int port;

    @Option(names = "--cluster-name", paramLabel = "NAME", defaultValue = "kvpager",
            description = "Cluster to join; nodes with other names never see each other (default: ${DEFAULT-VALUE}).")
    String name;

    /** Checks the values picocli cannot: a port in range and non-blank names. */
    void validate() {
        if (port < 0 || port > 65535) {
            throw new IllegalArgumentException("--cluster-port must be 0..65535, got " + port);
        }
        if (host.isBlank()) {
            throw new IllegalArgumentException("--cluster-host must not be blank");
        }
        if (name.isBlank()) {
            throw new IllegalArgumentException("--cluster-name must not be blank");
        }
    }

    @Override
    public String toString() {
        return "cluster '" + name + "' at " + host + ":" + (port == 0 ? "any port" : port);
    }
}
