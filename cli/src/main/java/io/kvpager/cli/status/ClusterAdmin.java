package io.kvpager.cli.status;

import io.kvpager.protocol.CoordinatorReply;
import io.kvpager.cluster.ClusterDirectory;
import io.kvpager.cluster.RegisteredWorker;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.json.DecodeException;
import io.vertx.core.json.Json;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import io.vertx.ext.web.Router;
import io.vertx.ext.web.RoutingContext;
import io.vertx.ext.web.handler.BodyHandler;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * The cluster's status and limits over HTTP, served by every clustered node on its metrics port,
 * so that {@code kvpager status/limit/top --cluster} are clients of one node rather than members
 * of the cluster: the node asks the coordinators over its own event bus, exactly as a member
 * command would, and answers in JSON. Routes:
 * <ul>
 *   <li>{@code GET /cluster/status?cluster=NAME[&instance=I...]}: {@code {cluster, instances: [
 *       {instance, stats} | {instance, failure}], uncoordinated: [{instance, pp, tp, node}]}}, every
 *       registered instance when none is named, and the workers whose instance no coordinator serves;</li>
 *   <li>{@code POST /cluster/limit?cluster=NAME} with {@code {instance, bytes[, revision]}}: the
 *       coordinator's {@code limit} answer (without a revision, the change takes the next one after
 *       the revision in force);</li>
 * </ul>
 * Both take {@code wait=MS}: wait for the coordinators at most that long (never longer than this
 * node's own timeout), so that a client with a short timeout hears of a paused coordinator in time.
 * A request for another cluster name is refused with 409 and this node's name, so that a client
 * that finds a node of another cluster on a port keeps looking.
 */
public final class ClusterAdmin {

    private final Vertx vertx;
    private final String clusterName;
    private final long timeoutMs;

    public ClusterAdmin(Vertx vertx, String clusterName, long timeoutMs) {
        this.vertx = vertx;
        this.clusterName = clusterName;
        this.timeoutMs = timeoutMs;
    }

    /** Adds the routes to {@code router}. */
    public void route(Router router) {
        router.get("/cluster/status").handler(this::status);
        router.post("/cluster/limit").handler(BodyHandler.create().setBodyLimit(LIMIT_BODY_BYTES)).handler(this::limit)
                .failureHandler(ClusterAdmin::refused);
    }

    /** The largest body {@code /cluster/limit} reads: its request is a few dozen bytes. */
    static final int LIMIT_BODY_BYTES = 4096;

    /**
     * A request the body handler refused (too large: 413) is answered with its status and why, not
     * left to the router, which would log it as an unhandled error of this node.
     */
    private static void refused(RoutingContext context) {
        int status = context.statusCode() > 0 ? context.statusCode() : 500;
        String why = status == 413 ? "the body is larger than " + LIMIT_BODY_BYTES + " bytes"
                : context.failure() != null ? String.valueOf(context.failure().getMessage()) : "refused (" + status + ")";
        if (!context.response().ended()) {
            reply(context, status, new JsonObject().put("error", why));
        }
    }

    private boolean sameCluster(RoutingContext context) {
        String asked = context.queryParams().get("cluster");
        if (asked != null && !asked.equals(clusterName)) {
            reply(context, 409, new JsonObject().put("cluster", clusterName)
                    .put("error", "this node is in cluster '" + clusterName + "', not '" + asked + "'"));
            return false;
        }
        return true;
    }

    private void status(RoutingContext context) {
        if (!sameCluster(context)) {
            return;
        }
        List<String> named = context.queryParams().getAll("instance");
        long wait = waitMs(context);
        // the directory's maps wait while a member that owns their partitions is paused, until the
        // cluster removes it: the directory gets part of the wait, then this node names what it serves itself
        long directoryWait = Math.max(1, wait * 2 / 5);
        ClusterDirectory directory = ClusterDirectory.of(vertx);
        Future<List<String>> names = named.isEmpty() ? new InstanceDirectory(vertx).instances()
                .timeout(directoryWait, TimeUnit.MILLISECONDS).otherwise(e -> directory.ownInstanceNames())
                : Future.succeededFuture(named);
        Future<List<InstanceStatus>> status = names.compose(new CoordinatorClient(vertx, Math.max(1, wait - directoryWait))::status);
        Future<List<RegisteredWorker>> uncoordinated = directory.workersWithoutCoordinator()
                .timeout(directoryWait, TimeUnit.MILLISECONDS).otherwise(e -> List.of());
        Future.all(status, uncoordinated).onComplete(ar -> {
            if (ar.failed()) {
                reply(context, 502, new JsonObject().put("error", String.valueOf(ar.cause().getMessage())));
                return;
            }
            JsonArray instances = new JsonArray();
            for (InstanceStatus one : status.result()) {
                JsonObject json = new JsonObject().put("instance", one.instance());
                instances.add(one.stats() != null ? json.put("stats", one.stats().toJson()) : json.put("failure", one.failure()));
            }
            JsonArray workers = new JsonArray();
            for (RegisteredWorker worker : uncoordinated.result()) {
                workers.add(new JsonObject().put("instance", worker.instance()).put("pp", worker.pp()).put("tp", worker.tp())
                        .put("node", worker.node()));
            }
            reply(context, 200, new JsonObject().put("cluster", clusterName).put("instances", instances).put("uncoordinated", workers));
        });
    }

    private void limit(RoutingContext context) {
        if (!sameCluster(context)) {
            return;
        }
        // any JSON value may come (an array, a string, null): only an object is a request
        Object parsed;
        try {
            parsed = context.body().isEmpty() ? null : Json.decodeValue(context.body().buffer());
        } catch (DecodeException e) {
            parsed = null;
        }
        JsonObject body = parsed instanceof JsonObject object ? object : null;
        Object revision = body == null ? null : body.getValue("revision");
        if (body == null || !(body.getValue("instance") instanceof String instance) || !(body.getValue("bytes") instanceof Number bytes)
                || (revision != null && !(revision instanceof Number))) {
            reply(context, 400, new JsonObject().put("error",
                    "the body must be {\"instance\": I, \"bytes\": N} or {\"instance\": I, \"bytes\": N, \"revision\": R}"));
            return;
        }
        Long asked = revision == null ? null : ((Number) revision).longValue();
        new CoordinatorClient(vertx, waitMs(context)).limit(instance, bytes.longValue(), asked).onComplete(ar -> {
            if (ar.failed()) {
                reply(context, ar.cause() instanceof InstanceUnreachable ? 404 : 502,
                        new JsonObject().put("error", String.valueOf(ar.cause().getMessage())));
                return;
            }
            // the coordinator's own reply, passed on as it wrote it
            reply(context, 200, new CoordinatorReply.Limit(ar.result()).toJson());
        });
    }

    /**
     * How long to wait for a coordinator: this node's timeout, or less where the client asks for
     * less ({@code wait=MS}), so that a paused coordinator is reported before the client gives up
     * on this node. A value that is not a positive whole number is ignored.
     */
    private long waitMs(RoutingContext context) {
        String asked = context.queryParams().get("wait");
        if (asked == null) {
            return timeoutMs;
        }
        try {
            long wait = Long.parseLong(asked);
            return wait > 0 ? Math.min(wait, timeoutMs) : timeoutMs;
        } catch (NumberFormatException e) {
            return timeoutMs;
        }
    }

    private static void reply(RoutingContext context, int status, JsonObject body) {
        context.response().setStatusCode(status).putHeader("content-type", "application/json").end(body.encode());
    }
}
