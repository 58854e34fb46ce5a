package io.kvpager.cli;

import picocli.CommandLine.Option;

/** {@code --metrics-port}: where a process serves Prometheus metrics at /metrics and health at /health; off when absent. */
final class MetricsPortOption {

    @Option(names = "--metrics-port", paramLabel = "PORT",
            description = "Serve Prometheus metrics at /metrics and health at /health on this port, 0 for any free one (default: off).")
    Integer port;

    boolean on() {
        return port != null;
    }

    /** @throws IllegalArgumentException for a port outside 0..65535 */
    void validate() {
        if (port != null && (port < 0 || port > 65535)) {
            throw new IllegalArgumentException("--metrics-port must be 0..65535, got " + port);
        }
    }
}
