package io.kvpager.cluster;

import io.vertx.core.json.JsonObject;

import java.util.Objects;

/**
 * A rank worker as the {@link ClusterDirectory} lists it: the rank it serves and the node it runs on.
 *
 * @param instance the cache instance the rank belongs to
 * @param pp its pipeline stage
 * @param tp its tensor-parallel rank
 * @param node the cluster node that runs it, and whose leaving removes the entry
 */
public record RegisteredWorker(String instance, int pp, int tp, String node) {

    public RegisteredWorker {
        Objects.requireNonNull(instance, "instance");
        Objects.requireNonNull(node, "node");
    }

    /** The rank as messages name it: {@code pp0/tp1}. */
    public String rank() {
        return "pp" + pp + "/tp" + tp;
    }

    /** The directory's key: one entry per rank and node, so that two workers for a rank are both seen. */
    String key() {
        return instance + "/" + rank() + "@" + node;
    }

    JsonObject toJson() {
        return new JsonObject().put("instance", instance).put("pp", pp).put("tp", tp).put("node", node);
    }

    static RegisteredWorker fromJson(JsonObject json) {
        return new RegisteredWorker(json.getString("instance"), json.getInteger("pp"), json.getInteger("tp"), json.getString("node"));
    }

    @Override
    public String toString() {
        return instance + " " + rank() + " on node " + node;
    }
}
