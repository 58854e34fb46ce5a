package io.kvpager.cli;

import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

/**
 * Whether a command that asks caches ({@code status}, {@code top}, {@code limit}) joins a cluster
 * to reach the caches of other processes, and which cluster: without {@code --cluster} it reaches
 * only the caches of its own process.
 */
final class ClusterJoin {

    @Option(names = "--cluster", description = "Join the cluster the --cluster-* options describe, to reach caches in other processes.")
    boolean join;

    @Mixin
    ClusterOptions options;
}
