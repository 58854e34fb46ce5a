package io.kvpager.cli;

import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.ParentCommand;
import picocli.CommandLine.Spec;

/**
 * What {@code status}, {@code top} and {@code limit} share: they are clients of the cluster's
 * nodes (over HTTP, or HTTPS with a key store), so they take the cluster's name and address flags
 * ({@link ClusterJoin}) and ask through {@link KvPager#clusterClient}.
 */
abstract class ClientCommand {

    @Spec
    CommandSpec spec;

    @ParentCommand
    KvPager root;

    @Mixin
    ClusterJoin cluster;
}
