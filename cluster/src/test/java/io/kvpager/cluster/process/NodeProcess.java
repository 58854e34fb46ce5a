package io.kvpager.cluster.process;

import io.kvpager.cache.KvCacheOptions;
import io.kvpager.cluster.ClusterNode;
import io.kvpager.cluster.ClusterNodeOptions;
import io.kvpager.impl.worker.WorkerConfig;
import io.vertx.core.Future;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * The main of a node process that a test spawns: joins the cluster, deploys the rank workers and
 * caches its spec lists, says {@code kvpager-node ready <nodeId> <startMillis> <readyMillis>} on
 * stdout, and leaves the cluster when its stdin says {@code close} or ends, or on SIGTERM (the
 * node's shutdown hook, as the command line has it). A failure to start is
 * one line, {@code kvpager-node failed <why>}, and exit code 1.
 *
 * <p>Spec: {@code {"node": ClusterNodeOptions, "workers": [WorkerConfig], "caches": [KvCacheOptions]}}.
 */
public final class NodeProcess {

    static final String PREFIX = "kvpager-node ";

    private NodeProcess() {
    }

    public static void main(String[] args) throws Exception {
        long began = System.nanoTime();
        JsonObject spec = new JsonObject(args[0]);
        ClusterNode node;
        try {
            node = ClusterNode.start(new ClusterNodeOptions(spec.getJsonObject("node"))).await(60, TimeUnit.SECONDS)
                    .closeOnShutdown();
            List<Future<?>> deployed = new ArrayList<>();
            for (Object worker : spec.getJsonArray("workers", new JsonArray())) {
                deployed.add(node.deployWorker(new WorkerConfig((JsonObject) worker)));
            }
            for (Object cache : spec.getJsonArray("caches", new JsonArray())) {
                deployed.add(node.deployCache(new KvCacheOptions((JsonObject) cache)));
            }
            Future.all(deployed).await(60, TimeUnit.SECONDS);
        } catch (Throwable e) {
            System.out.println(PREFIX + "failed " + String.valueOf(e).replace('\n', ' '));
            System.out.flush();
            System.exit(1);
            return;
        }
        System.out.println(PREFIX + "ready " + node.nodeId() + " " + node.startMillis() + " " + (System.nanoTime() - began) / 1_000_000);
        System.out.flush();
        try (BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8))) {
            String line;
            while ((line = in.readLine()) != null && !line.trim().equals("close")) {
                // keep serving until told to close, or until the test that spawned us is gone
            }
        }
        node.close().await(30, TimeUnit.SECONDS);
        System.out.println(PREFIX + "closed");
        System.out.flush();
        System.exit(0);
    }
}
