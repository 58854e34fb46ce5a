package io.kvpager.cli;

import io.kvpager.cluster.ClusterNodeOptions;
import java.net.InetAddress;
import picocli.CommandLine.Option;

/**
 * {@code --metrics-port} of a clustered node ({@code worker}, {@code coordinator}): its HTTP
 * endpoint with Prometheus metrics at /metrics, health at /health, and the cluster's status and
 * limits at /cluster/*, which {@code status}, {@code limit} and {@code top --cluster} ask. On by
 * default, on the first free port from {@value #DEFAULT_PORT} up, as members take their ports.
 */
final class NodeEndpointOption {

    static final int DEFAULT_PORT = 9464;
    /** Ports a node tries from the first, and a client asks on each host. */
    static final int PORTS = 10;

    @Option(names = "--metrics-port", paramLabel = "PORT", defaultValue = "" + DEFAULT_PORT,
            description = "This node's HTTP endpoint: /metrics (Prometheus), /health and /cluster/* (what status, limit and top --cluster ask); "
                    + "the first free port of " + PORTS + " from PORT up, 0 for any free one, off for none (default: ${DEFAULT-VALUE}).")
    String port;

    @Option(names = "--admin-without-tls",
            description = "Serve this endpoint over plain HTTP on a --cluster-host that is not loopback, without --tls-key-store: anyone who "
                    + "reaches the port can then change every instance's limit through /cluster/limit. Refused without this flag.")
    boolean withoutTls;

    boolean on() {
        return !"off".equals(port);
    }

    /**
     * The first port to try.
     *
     * @throws IllegalArgumentException for neither a port 0..65535 nor {@code off}
     */
    int port() {
        try {
            int p = Integer.parseInt(port);
            if (p < 0 || p > 65535) {
                throw new NumberFormatException();
            }
            return p;
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException("--metrics-port must be a port 0..65535 or off, got '" + port + "'");
        }
    }

    /**
     * Refuses a plain-HTTP endpoint on a host other machines reach, unless asked for by name.
     *
     * @throws IllegalArgumentException saying why and what to do
     */
    void checkExposure(ClusterNodeOptions node) {
        if (!on() || node.isTls() || withoutTls || InetAddress.ofLiteral(node.getHost()).isLoopbackAddress()) {
            return;
        }
        throw new IllegalArgumentException("--cluster-host " + node.getHost() + " is not loopback and TLS is off: this node's endpoint"
                + " (--metrics-port) would serve /cluster/limit over plain HTTP to anyone who reaches " + node.getHost()
                + ", and that changes every instance's limit; give --tls-key-store (HTTPS, client certificates required for /cluster/*),"
                + " or --metrics-port off, or --admin-without-tls to serve it anyway on a network only the cluster's operators reach");
    }

    void validate() {
        if (on()) {
            port();
        }
    }
}
