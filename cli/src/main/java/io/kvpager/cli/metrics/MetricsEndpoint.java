package io.kvpager.cli.metrics;

import io.kvpager.cache.KvCache;
import io.kvpager.cli.status.ClusterAdmin;
import io.kvpager.metrics.CacheHealth;
import io.kvpager.metrics.KvCacheMeters;
import io.kvpager.metrics.RankCallMeters;
import io.micrometer.core.instrument.MeterRegistry;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.VerticleBase;
import io.vertx.core.http.HttpServer;
import io.vertx.core.http.HttpServerOptions;
import io.vertx.core.json.JsonObject;
import io.vertx.ext.healthchecks.HealthChecks;
import io.vertx.ext.healthchecks.Status;
import io.vertx.ext.web.Router;
import io.vertx.ext.web.RoutingContext;
import io.vertx.ext.web.healthchecks.HealthCheckHandler;
import io.vertx.micrometer.MicrometerMetricsOptions;
import io.vertx.micrometer.PrometheusScrapingHandler;
import io.vertx.micrometer.VertxPrometheusOptions;
import io.vertx.micrometer.backends.BackendRegistries;
import java.util.List;
import java.util.concurrent.TimeUnit;
import javax.net.ssl.SSLPeerUnverifiedException;

/**
 * Prometheus metrics at {@code /metrics} and health at {@code /health}, on one HTTP port: Vert.x's
 * own meters (event bus, HTTP, pools, JVM) and kvpager's from the {@code kvpager-metrics} library: the
 * caches' figures ({@link KvCacheMeters}) and event-bus call latency histograms ({@link RankCallMeters}).
 * Health has one check per cache, named after its instance: UP only when it is ready; degraded and
 * failed are DOWN with the state and the reason ({@link CacheHealth}).
 *
 * <p>A verticle of its own, so that its server and timer belong to no cache's deployment and live
 * until {@link #close()}.
 */
public final class MetricsEndpoint extends VerticleBase implements AutoCloseable {

    /** How often kvpager's meters fetch the caches' stats. */
    static final long REFRESH_MS = 1000;
    private static final long TIMEOUT_S = 10;
    private static final long STALE_SWEEP_MS = 60_000;

    private final String host;
    private final int requestedPort;
    private final int ports;
    private final ClusterAdmin admin;
    private final List<KvCache> caches;
    private final MeterRegistry registry;
    private final HttpServerOptions serverOptions;
    private KvCacheMeters meters;
    private RankCallMeters rankCalls;
    private HttpServer server;
    private String deployment;

    private MetricsEndpoint(String host, int port, int ports, ClusterAdmin admin, List<KvCache> caches, MeterRegistry registry,
                            HttpServerOptions serverOptions) {
        this.host = host;
        this.serverOptions = new HttpServerOptions(serverOptions);
        this.requestedPort = port;
        this.ports = ports;
        this.admin = admin;
        this.caches = List.copyOf(caches);
        this.registry = registry;
    }

    /** The metrics options a Vert.x needs for this endpoint: Micrometer with a Prometheus registry. */
    public static MicrometerMetricsOptions metricsOptions() {
        return new MicrometerMetricsOptions()
                .setEnabled(true)
                .setJvmMetricsEnabled(true)
                .setPrometheusOptions(new VertxPrometheusOptions().setEnabled(true));
    }

    /**
     * Starts the endpoint; blocks until it listens, so call it from a thread that may block.
     *
     * @param vertx a Vert.x created with {@link #metricsOptions()}
     * @param port the port, 0 for any free one
     * @throws IllegalStateException when {@code vertx} has no Micrometer registry, or the port cannot be bound
     */
    public static MetricsEndpoint listen(Vertx vertx, int port, List<KvCache> caches) {
        return listen(vertx, null, port, 1, caches, null);
    }

    /**
     * As {@link #listen(Vertx, int, List)} on {@code host} ({@code null}: every interface), on the
     * first free port of {@code ports} from {@code port} up (as a cluster member takes its port),
     * serving {@code admin}'s routes too when it is not {@code null}.
     */
    public static MetricsEndpoint listen(Vertx vertx, String host, int port, int ports, List<KvCache> caches, ClusterAdmin admin) {
        return listen(vertx, host, port, ports, caches, admin, new HttpServerOptions());
    }

    /**
     * As {@link #listen(Vertx, String, int, int, List, ClusterAdmin)} with {@code server}'s options:
     * with TLS on in them (a client certificate asked for, not required), {@code /metrics} and
     * {@code /health} answer any client, and {@code admin}'s routes only a client that presented a
     * certificate the trust store vouches for; others are answered 401 and reach nothing.
     */
    public static MetricsEndpoint listen(Vertx vertx, String host, int port, int ports, List<KvCache> caches, ClusterAdmin admin,
                                         HttpServerOptions server) {
        MeterRegistry registry = BackendRegistries.getDefaultNow();
        if (registry == null) {
            throw new IllegalStateException("metrics are off in this Vert.x: create it with MetricsEndpoint.metricsOptions()");
        }
        MetricsEndpoint endpoint = new MetricsEndpoint(host, port, port == 0 ? 1 : ports, admin, caches, registry, server);
        try {
            endpoint.deployment = vertx.deployVerticle(endpoint).await(TIMEOUT_S, TimeUnit.SECONDS);
            return endpoint;
        } catch (Exception e) {
            throw new IllegalStateException("the metrics endpoint did not start on port " + port
                    + (ports > 1 && port != 0 ? " or the " + (ports - 1) + " above it" : "") + ": " + e.getMessage(), e);
        }
    }

    @Override
    public Future<?> start() {
        meters = new KvCacheMeters(vertx, registry, caches);
        rankCalls = new RankCallMeters(registry);
        rankCalls.install(vertx.eventBus());
        vertx.setPeriodic(STALE_SWEEP_MS, id -> rankCalls.forgetStale());
        HealthChecks health = HealthChecks.create(vertx);
        for (KvCache cache : caches) {
            health.register(cache.options().getInstance(), REFRESH_MS, promise -> cache.stats()
                    .onSuccess(stats -> promise.complete(status(CacheHealth.of(stats))))
                    .onFailure(e -> promise.complete(status(CacheHealth.unanswered(e)))));
        }
        Router router = Router.router(vertx);
        router.get("/metrics").handler(PrometheusScrapingHandler.create());
        router.get("/health").handler(HealthCheckHandler.createWithHealthChecks(health));
        if (admin != null) {
            if (serverOptions.isSsl()) {
                router.route("/cluster/*").order(-1).handler(MetricsEndpoint::requireClientCertificate);
            }
            admin.route(router);
        }
        return meters.start(REFRESH_MS)
                .compose(v -> listenFrom(router, requestedPort, ports))
                .onSuccess(listening -> server = listening)
                .onFailure(e -> {
                    meters.close();
                    rankCalls.remove(vertx.eventBus());
                });
    }

    /** Listens on {@code port}, or the next port up while one is taken, {@code left} ports in all. */
    private Future<HttpServer> listenFrom(Router router, int port, int left) {
        return (host == null ? vertx.createHttpServer(serverOptions).requestHandler(router).listen(port)
                : vertx.createHttpServer(serverOptions).requestHandler(router).listen(port, host))
                .recover(e -> left > 1 && port < 65535 ? listenFrom(router, port + 1, left - 1) : Future.failedFuture(e));
    }

    @Override
    public Future<?> stop() {
        meters.close();
        rankCalls.remove(vertx.eventBus());
        return Future.succeededFuture();
    }

    /**
     * Lets a request on to the admin routes only when its client presented a certificate; the TLS
     * handshake has already checked it against the trust store (a certificate it does not vouch
     * for ends the handshake).
     */
    private static void requireClientCertificate(RoutingContext context) {
        boolean certified;
        try {
            certified = context.request().isSSL() && !context.request().connection().peerCertificates().isEmpty();
        } catch (SSLPeerUnverifiedException e) {
            certified = false;
        }
        if (certified) {
            context.next();
            return;
        }
        context.response().setStatusCode(401).putHeader("content-type", "application/json").end(new JsonObject()
                .put("error", "/cluster/* needs a client certificate that this node's trust store vouches for (--tls-key-store)").encode());
    }

    /** UP only when ready; degraded and failed are DOWN (503), with the state and the reason. */
    private static Status status(CacheHealth health) {
        JsonObject data = new JsonObject().put("state", health.stateName());
        if (health.reason() != null) {
            data.put("reason", health.reason());
        }
        return health.state() == CacheHealth.State.READY ? Status.OK(data) : Status.KO(data);
    }

    /** {@code ", metrics at http://host:port/metrics"} for a ready line, or nothing when {@code endpoint} is {@code null}. */
    public static String describe(MetricsEndpoint endpoint, String host) {
        return endpoint == null ? "" : ", metrics at " + (endpoint.serverOptions.isSsl() ? "https" : "http") + "://" + host + ":"
                + endpoint.port() + "/metrics";
    }

    /** The port it listens on. */
    public int port() {
        return server.actualPort();
    }

    /** The registry the meters are in: an embedding program may add its own. */
    public MeterRegistry registry() {
        return registry;
    }

    /** Stops serving and removes kvpager's meters; blocks until done. */
    @Override
    public void close() {
        try {
            vertx.undeploy(deployment).await(TIMEOUT_S, TimeUnit.SECONDS);
        } catch (Exception e) {
            throw new IllegalStateException("the metrics endpoint did not stop: " + e.getMessage(), e);
        }
    }
}
