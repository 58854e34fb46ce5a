package io.kvpager.cli.status;

import io.kvpager.protocol.CoordinatorReply;
import io.kvpager.cache.CacheStats;
import io.kvpager.LimitResult;
import io.vertx.core.json.DecodeException;
import io.kvpager.cluster.RegisteredWorker;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.HttpURLConnection;
import java.net.URI;
import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import javax.net.ssl.HttpsURLConnection;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLSocketFactory;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.TimeUnit;

/**
 * {@code status}, {@code limit} and {@code top} against a running cluster as a client, not a
 * member: one HTTP request to the first node of the cluster that answers on its metrics port
 * ({@link ClusterAdmin}). Nothing joins or leaves the cluster, so its members see nothing and the
 * answer takes one round trip instead of a Hazelcast join. No Vert.x is started here, and the
 * plain {@link HttpURLConnection} keeps HTTP/2 classes out of a command that must start fast. With
 * TLS it speaks HTTPS, presenting its certificate, and checks the node's chain, not its host name
 * (one certificate may serve every node, as on the event bus).
 *
 * <p>A node that stops answering (a paused process: its kernel still accepts the connection) never
 * holds a command up for long: every node is asked with the same short timeout, {@code status} asks
 * them all at once and takes the first answer, and each node is told to wait for the coordinators no
 * longer than {@value #NODE_SHARE_PERCENT} % of that timeout ({@code wait} in the query), so that a
 * paused coordinator comes back as an instance that did not answer rather than as a node that did
 * not. {@code limit} asks the nodes in turn, so that a change is applied once.
 */
public final class ClusterClient {

    private final List<URI> nodes;
    private final String clusterName;
    private final Duration timeout;
    /**
     * One factory for every request, so that a client that asks again ({@code top}) reuses the
     * connection and its TLS session; its sockets offer X25519 alone ({@link ClientSockets}).
     */
    private final SSLSocketFactory tls;
    /** The share of the timeout a node may spend waiting for the coordinators, so that its answer arrives in time. */
    static final int NODE_SHARE_PERCENT = 70;

    /**
     * @param nodes node endpoints to try in order ({@code http://host:port})
     * @param clusterName the cluster asked for; a node of another cluster is skipped
     * @param timeout how long each node may take to answer, coordinators' answers included
     */
    public ClusterClient(List<URI> nodes, String clusterName, Duration timeout) {
        this(nodes, clusterName, timeout, null);
    }

    /**
     * As {@link #ClusterClient(List, String, Duration)}, presenting {@code tls}'s key to
     * {@code https://} nodes and trusting the nodes it trusts ({@code null}: plain HTTP only).
     */
    public ClusterClient(List<URI> nodes, String clusterName, Duration timeout, SSLContext tls) {
        if (nodes.isEmpty()) {
            throw new IllegalArgumentException("no node to ask");
        }
        if (timeout.toMillis() < 10) {
            throw new IllegalArgumentException("a timeout must be 10 ms or more, got " + timeout.toMillis() + " ms");
        }
        this.nodes = List.copyOf(nodes);
        this.clusterName = clusterName;
        this.timeout = timeout;
        this.tls = tls == null ? null : new ClientSockets(tls.getSocketFactory());
    }

    /** The stats of the instances named, or of every registered instance when none is. */
    public List<InstanceStatus> status(List<String> instances) throws IOException {
        return clusterStatus(instances).instances();
    }

    /** The stats of the instances named (every registered one when none is), and the workers no coordinator serves. */
    public ClusterStatus clusterStatus(List<String> instances) throws IOException {
        StringBuilder query = new StringBuilder("/cluster/status?cluster=").append(encode(clusterName)).append("&wait=")
                .append(nodeWaitMs());
        for (String instance : instances) {
            query.append("&instance=").append(encode(instance));
        }
        JsonObject answer = askAll(query.toString());
        List<InstanceStatus> status = new ArrayList<>();
        JsonArray all = answer.getJsonArray("instances", new JsonArray());
        for (int i = 0; i < all.size(); i++) {
            JsonObject one = all.getJsonObject(i);
            status.add(one.containsKey("stats") ? InstanceStatus.of(CacheStats.fromJson(one.getJsonObject("stats")))
                    : InstanceStatus.unreachable(one.getString("instance"), one.getString("failure")));
        }
        List<RegisteredWorker> uncoordinated = new ArrayList<>();
        JsonArray workers = answer.getJsonArray("uncoordinated", new JsonArray());
        for (int i = 0; i < workers.size(); i++) {
            JsonObject w = workers.getJsonObject(i);
            uncoordinated.add(new RegisteredWorker(w.getString("instance"), w.getInteger("pp"), w.getInteger("tp"), w.getString("node")));
        }
        return new ClusterStatus(status, uncoordinated).of(instances);
    }

    /** A limit change, in bytes per rank, under {@code revision}, or under the next one after the revision in force when it is {@code null}. */
    public LimitResult limit(String instance, long bytes, Long revision) throws IOException {
        JsonObject change = new JsonObject().put("instance", instance).put("bytes", bytes);
        if (revision != null) {
            change.put("revision", revision);
        }
        String body = change.encode();
        String path = "/cluster/limit?cluster=" + encode(clusterName) + "&wait=" + nodeWaitMs();
        return CoordinatorReply.Limit.fromJson(askInTurn(path, body)).result();
    }

    /** How long a node may wait for the coordinators: a share of the timeout, leaving it time to answer. */
    long nodeWaitMs() {
        return Math.max(1, timeout.toMillis() * NODE_SHARE_PERCENT / 100);
    }

    /** What one node answered: its HTTP status and body. */
    private record Answer(int status, String body) {
    }

    /** One node's reply read: an answer to return, or why this node is skipped. */
    private record Outcome(JsonObject answer, Exception definite, String skipped) {
    }

    /** A GET of {@code path}, or a POST of {@code body} when it is not {@code null}. */
    private Answer send(URI node, String path, String body) throws IOException {
        HttpURLConnection connection = (HttpURLConnection) node.resolve(path).toURL().openConnection();
        if (connection instanceof HttpsURLConnection https && tls != null) {
            https.setSSLSocketFactory(tls);
            // the chain is checked against the trust store; nodes share certificates, so no host name is checked
            https.setHostnameVerifier((host, session) -> true);
        }
        connection.setConnectTimeout((int) Math.min(1000, timeout.toMillis()));
        connection.setReadTimeout((int) timeout.toMillis());
        try {
            if (body != null) {
                connection.setRequestMethod("POST");
                connection.setDoOutput(true);
                connection.setRequestProperty("content-type", "application/json");
                try (OutputStream out = connection.getOutputStream()) {
                    out.write(body.getBytes(StandardCharsets.UTF_8));
                }
            }
            int status = connection.getResponseCode();
            try (InputStream in = status < 400 ? connection.getInputStream() : connection.getErrorStream()) {
                return new Answer(status, in == null ? "" : new String(in.readAllBytes(), StandardCharsets.UTF_8));
            }
        } finally {
            connection.disconnect();
        }
    }

    /**
     * Asks every node at once and returns the first answer of a node of this cluster, or the
     * failure a node of this cluster answered; waits at most the timeout (and a little to read) for
     * each, so a paused node costs no more than that.
     */
    private JsonObject askAll(String path) throws IOException {
        BlockingQueue<Outcome> done = new LinkedBlockingQueue<>();
        List<Outcome> seen = new ArrayList<>();
        // not closed with try-with-resources: closing waits for every asker, a paused node's among them.
        // Platform threads, not virtual ones: a virtual thread's blocking socket read starts the JDK's I/O poller,
        // a thread parked in native code, and a JVM that exits waits up to 300 ms for such threads to stop.
        ExecutorService askers = Executors.newThreadPerTaskExecutor(Thread.ofPlatform().daemon().name("kvpager-ask-", 0).factory());
        try {
            for (URI node : nodes) {
                askers.submit(() -> done.add(outcome(node, path, null)));
            }
            for (int answered = 0; answered < nodes.size(); answered++) {
                Outcome outcome;
                try {
                    outcome = done.poll(timeout.toMillis() + 1000, TimeUnit.MILLISECONDS);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    throw new IOException("interrupted while asking the nodes of cluster '" + clusterName + "'", e);
                }
                if (outcome == null) {
                    break;
                }
                if (outcome.answer() != null) {
                    return outcome.answer();
                }
                seen.add(outcome);
            }
        } finally {
            askers.shutdownNow();
        }
        return failed(seen);
    }

    /** Asks the nodes one after the other, each within the timeout, until one of this cluster answers. */
    private JsonObject askInTurn(String path, String body) throws IOException {
        List<Outcome> seen = new ArrayList<>();
        for (URI node : nodes) {
            Outcome outcome = outcome(node, path, body);
            if (outcome.answer() != null) {
                return outcome.answer();
            }
            if (outcome.definite() != null) {
                return failed(List.of(outcome));
            }
            seen.add(outcome);
        }
        return failed(seen);
    }

    /** Throws the first failure a node of this cluster answered, or that no node answered. */
    private JsonObject failed(List<Outcome> seen) throws IOException {
        List<String> tried = new ArrayList<>();
        for (Outcome outcome : seen) {
            if (outcome.definite() instanceof IOException e) {
                throw e;
            }
            if (outcome.definite() instanceof RuntimeException e) {
                throw e;
            }
            tried.add(outcome.skipped());
        }
        throw new Unreachable("no node of cluster '" + clusterName + "' answered within " + timeout.toMillis() + " ms; tried "
                + String.join(", ", tried) + "; name a node's metrics endpoint with --node HOST:PORT");
    }

    /** What {@code node} answered: its JSON, a failure it answered for this cluster, or why it is skipped. */
    private Outcome outcome(URI node, String path, String body) {
        Answer response;
        try {
            response = send(node, path, body);
        } catch (IOException e) {
            return skip(node, e.getMessage() == null ? e.getClass().getSimpleName() : e.getMessage());
        }
        JsonObject json;
        try {
            json = new JsonObject(response.body());
        } catch (DecodeException | ClassCastException e) {
            return skip(node, "not a kvpager node: HTTP " + response.status());
        }
        if (response.status() == 409) {
            return skip(node, "cluster '" + json.getString("cluster") + "'");
        }
        if (response.status() == 401) {
            return new Outcome(null, new IOException(node.getAuthority() + " refused this client: " + json.getString("error")), null);
        }
        if (response.status() == 404) {
            return new Outcome(null, new InstanceUnreachable(null, json.getString("error")), null);
        }
        if (response.status() != 200) {
            return new Outcome(null, new IOException(node.getAuthority() + " answered HTTP " + response.status() + ": "
                    + json.getString("error")), null);
        }
        return new Outcome(json, null, null);
    }

    private static Outcome skip(URI node, String why) {
        return new Outcome(null, null, node.getAuthority() + " (" + why + ")");
    }

    private static String encode(String text) {
        return URLEncoder.encode(text, StandardCharsets.UTF_8);
    }

    /** No node of the cluster answered in time: the cluster is unreachable from here (status exits 4 on it). */
    public static final class Unreachable extends IOException {
        Unreachable(String message) {
            super(message);
        }
    }
}
