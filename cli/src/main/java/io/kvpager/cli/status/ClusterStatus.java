package io.kvpager.cli.status;

import io.kvpager.cluster.RegisteredWorker;
import java.util.List;

/**
 * What {@code status} reports of a cluster: each instance's stats (or why it did not answer), and
 * the workers whose instance no coordinator serves, which hold a GPU for nobody.
 */
public record ClusterStatus(List<InstanceStatus> instances, List<RegisteredWorker> uncoordinated) {

    public ClusterStatus {
        instances = List.copyOf(instances);
        uncoordinated = List.copyOf(uncoordinated);
    }

    /** Only what concerns {@code names}, or everything when none is named. */
    public ClusterStatus of(List<String> names) {
        return names.isEmpty() ? this
                : new ClusterStatus(instances, uncoordinated.stream().filter(w -> names.contains(w.instance())).toList());
    }
}
