package io.kvpager.impl.coordinator;

import io.kvpager.cache.KvCacheOptions;
import io.vertx.core.Context;
import io.vertx.core.DeploymentOptions;
import io.vertx.core.Future;
import io.vertx.core.VerticleBase;
import io.vertx.core.Vertx;
import io.vertx.core.eventbus.DeliveryOptions;
import io.vertx.core.eventbus.MessageConsumer;
import io.vertx.core.eventbus.ReplyException;
import io.vertx.core.eventbus.ReplyFailure;
import io.vertx.core.json.JsonObject;

/**
 * One cache's coordinator: an event-loop verticle whose config is the cache's
 * {@link KvCacheOptions} as JSON. On start it listens at {@code kvpager.<instance>.coordinator}
 * and creates the pool's tensors on every rank; the start completes when they exist (or at once
 * with {@code lazyStart}). On stop it destroys them.
 *
 * <p>When the tensors cannot be created, the deployment fails with the cause, after destroying
 * what was created on some ranks.
 */
public final class CoordinatorVerticle extends VerticleBase {

    private Coordinator coordinator;
    private volatile Thread thread;

    /** How to deploy a coordinator for {@code options}. */
    public static DeploymentOptions deploymentOptions(KvCacheOptions options) {
        return new DeploymentOptions().setConfig(options.toJson());
    }

    @Override
    public Future<?> start() {
        thread = Thread.currentThread();
        KvCacheOptions options;
        try {
            options = new KvCacheOptions(config()).validate();
            coordinator = new Coordinator(vertx, context, options);
        } catch (IllegalArgumentException e) {
            return Future.failedFuture(e);
        }
        return addressIsFree(vertx, options).compose(free -> {
            MessageConsumer<Object> consumer = vertx.eventBus().consumer(coordinator.pool().coordinatorAddress(),
                    new CoordinatorEndpoint(coordinator));
            Future<Void> started = coordinator.start();
            if (options.isLazyStart()) {
                return consumer.completion();
            }
            return consumer.completion().compose(v -> started)
                    .recover(e -> coordinator.close().transform(closed -> Future.failedFuture(e)));
        });
    }

    /**
     * Two consumers at one coordinator address would take turns answering, each for its own pool:
     * the start fails when another coordinator already answers there.
     */
    static Future<Void> addressIsFree(Vertx vertx, KvCacheOptions options) {
        String address = PoolRanks.of(options).coordinatorAddress();
        DeliveryOptions ask = new DeliveryOptions().addHeader(RankFanOut.ACTION, "pool")
                .setSendTimeout(Math.min(options.getSendTimeoutMs(), 5_000));
        return vertx.eventBus().request(address, new JsonObject(), ask).transform(ar -> {
            if (ar.failed() && ar.cause() instanceof ReplyException r && r.failureType() == ReplyFailure.NO_HANDLERS) {
                return Future.succeededFuture();
            }
            String other = ar.succeeded() ? " serving " + ar.result().body() : " (" + ar.cause().getMessage() + ")";
            return Future.failedFuture(new IllegalArgumentException("instance " + options.getInstance()
                    + " already has a coordinator at " + address + other + "; one cache per instance name"));
        });
    }

    @Override
    public Future<?> stop() {
        return coordinator == null ? Future.succeededFuture() : coordinator.close();
    }

    /** The cache's insides; call their methods only on {@link #context()}. */
    public Coordinator coordinator() {
        return coordinator;
    }

    /** The event-loop context every call on the {@link #coordinator()} must run on. */
    public Context context() {
        return context;
    }

    /**
     * The event-loop thread of {@link #context()}. Code running on it may call the coordinator
     * directly whatever its own context: a periodic timer's handler, for one, runs on a context
     * of its own, on the same thread, one task at a time with the coordinator's.
     */
    public Thread thread() {
        return thread;
    }
}
