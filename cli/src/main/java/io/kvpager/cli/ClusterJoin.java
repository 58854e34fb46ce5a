package io.kvpager.cli;

import java.net.URI;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

/**
 * Whether a command that asks caches ({@code status}, {@code top}, {@code limit}) reaches the
 * caches of other processes, and in which cluster: without {@code --cluster} it reaches only the
 * caches of its own process. With it the command is a client of one node of the cluster (an HTTP
 * request to the node's metrics port), never a member: it joins nothing.
 */
final class ClusterJoin {

    @Option(names = "--cluster", description = "Ask the cluster named by --cluster-name, through one of its nodes (--node, or the nodes' "
            + "default metrics ports on the --cluster-host and --cluster-join hosts).")
    boolean join;

    @Option(names = "--node", paramLabel = "HOST:PORT", split = ",",
            description = "Node endpoints to ask (a worker's or coordinator's --metrics-port), comma-separated; the first that answers for "
                    + "the cluster is used (default: ports 9464-9473 of each --cluster-join host, or of --cluster-host).")
    List<String> nodes = new ArrayList<>();

    @Mixin
    ClusterOptions options;

    /**
     * The node endpoints to try, in order.
     *
     * @throws IllegalArgumentException for a --node that is not HOST:PORT
     */
    List<URI> endpoints() {
        List<URI> endpoints = new ArrayList<>();
        for (String node : nodes) {
            int colon = node.lastIndexOf(':');
            int port;
            try {
                port = colon > 0 ? Integer.parseInt(node.substring(colon + 1)) : -1;
            } catch (NumberFormatException e) {
                port = -1;
            }
            if (port < 1 || port > 65535) {
                throw new IllegalArgumentException("--node must be HOST:PORT (a node's --metrics-port), got '" + node + "'");
            }
            endpoints.add(URI.create(scheme() + node));
        }
        if (endpoints.isEmpty()) {
            Set<String> hosts = new LinkedHashSet<>();
            for (String member : options.join) {
                int colon = member.lastIndexOf(':');
                hosts.add(colon > 0 ? member.substring(0, colon) : member);
            }
            if (hosts.isEmpty()) {
                hosts.add(options.host);
            }
            for (String host : hosts) {
                for (int port = NodeEndpointOption.DEFAULT_PORT; port < NodeEndpointOption.DEFAULT_PORT + NodeEndpointOption.PORTS; port++) {
                    endpoints.add(URI.create(scheme() + host + ":" + port));
                }
            }
        }
        return endpoints;
    }

    /** With a key store the nodes' endpoints speak HTTPS and ask for this client's certificate. */
    private String scheme() {
        return options.keyStore != null ? "https://" : "http://";
    }
}
