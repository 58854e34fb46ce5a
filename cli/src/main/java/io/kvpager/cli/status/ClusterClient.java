package io.kvpager.cli.status;

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

/**
 * {@code status}, {@code limit} and {@code top} against a running cluster as a client, not a
 * member: one HTTP request to the first node of the cluster that answers on its metrics port
 * ({@link ClusterAdmin}). Nothing joins or leaves the cluster, so its members see nothing and the
 * answer takes one round trip instead of a Hazelcast join. No Vert.x is started here, and the
 * plain {@link HttpURLConnection} keeps HTTP/2 classes out of a command that must start fast. With
 * TLS it speaks HTTPS, presenting its certificate, and checks the node's chain, not its host name
 * (one certificate may serve every node, as on the event bus).
 */
public final class ClusterClient {

    private final List<URI> nodes;
    private final String clusterName;
    private final Duration timeout;
    /** One factory for every request, so that a client that asks again ({@code top}) reuses the connection and its TLS session. */
    private final SSLSocketFactory tls;

    /**
     * @param nodes node endpoints to try in order ({@code http://host:port})
     * @param clusterName the cluster asked for; a node of another cluster is skipped
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
        this.nodes = List.copyOf(nodes);
        this.clusterName = clusterName;
        this.timeout = timeout;
        this.tls = tls == null ? null : tls.getSocketFactory();
    }

    /** The stats of the instances named, or of every registered instance when none is. */
    public List<InstanceStatus> status(List<String> instances) throws IOException {
        return clusterStatus(instances).instances();
    }

    /** The stats of the instances named (every registered one when none is), and the workers no coordinator serves. */
    public ClusterStatus clusterStatus(List<String> instances) throws IOException {
        StringBuilder query = new StringBuilder("/cluster/status?cluster=").append(encode(clusterName));
        for (String instance : instances) {
            query.append("&instance=").append(encode(instance));
        }
        JsonObject answer = ask(query.toString(), null);
        List<InstanceStatus> status = new ArrayList<>();
        JsonArray all = answer.getJsonArray("instances", new JsonArray());
        for (int i = 0; i < all.size(); i++) {
            JsonObject one = all.getJsonObject(i);
            status.add(one.containsKey("stats") ? InstanceStatus.of(StatsReply.cacheStats(one.getJsonObject("stats")))
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
        return StatsReply.limitResult(ask("/cluster/limit?cluster=" + encode(clusterName), body));
    }

    /** What one node answered: its HTTP status and body. */
    private record Answer(int status, String body) {
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

    /** The first answer of a node of this cluster; an unreachable node or one of another cluster is skipped. */
    private JsonObject ask(String path, String body) throws IOException {
        List<String> tried = new ArrayList<>();
        for (URI node : nodes) {
            Answer response;
            try {
                response = send(node, path, body);
            } catch (IOException e) {
                tried.add(node.getAuthority() + " (" + (e.getMessage() == null ? e.getClass().getSimpleName() : e.getMessage()) + ")");
                continue;
            }
            JsonObject json;
            try {
                json = new JsonObject(response.body());
            } catch (DecodeException | ClassCastException e) {
                tried.add(node.getAuthority() + " (not a kvpager node: HTTP " + response.status() + ")");
                continue;
            }
            if (response.status() == 409) {
                tried.add(node.getAuthority() + " (cluster '" + json.getString("cluster") + "')");
                continue;
            }
            if (response.status() == 401) {
                throw new IOException(node.getAuthority() + " refused this client: " + json.getString("error"));
            }
            if (response.status() == 404) {
                throw new InstanceUnreachable(null, json.getString("error"));
            }
            if (response.status() != 200) {
                throw new IOException(node.getAuthority() + " answered HTTP " + response.status() + ": " + json.getString("error"));
            }
            return json;
        }
        throw new IOException("no node of cluster '" + clusterName + "' answered; tried " + String.join(", ", tried)
                + "; name a node's metrics endpoint with --node HOST:PORT");
    }

    private static String encode(String text) {
        return URLEncoder.encode(text, StandardCharsets.UTF_8);
    }
}
