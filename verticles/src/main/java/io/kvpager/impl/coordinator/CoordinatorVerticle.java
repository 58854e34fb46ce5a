package io.kvpager.impl.coordinator;

import io.kvpager.protocol.PoolRanks;
import io.kvpager.LimitResult;
import io.kvpager.cache.KvCacheOptions;
import io.kvpager.internal.bus.KeptRegistration;
import io.kvpager.internal.membership.ClusterMembership;
import io.kvpager.protocol.CoordinatorRequest;
import io.kvpager.protocol.WorkerProtocol;
import io.vertx.core.Context;
import io.vertx.core.DeploymentOptions;
import io.vertx.core.Future;
import io.vertx.core.VerticleBase;
import io.vertx.core.Vertx;
import io.vertx.core.eventbus.DeliveryOptions;
import io.vertx.core.eventbus.MessageConsumer;
import io.vertx.core.eventbus.ReplyException;
import io.vertx.core.eventbus.ReplyFailure;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One cache's coordinator: an event-loop verticle whose config is the cache's
 * {@link KvCacheOptions} as JSON. On start it listens at {@code kvpager.<instance>.coordinator}
 * and creates the pool's tensors on every rank; the start completes when they exist (or at once
 * with {@code lazyStart}). On stop it destroys them.
 *
 * <p>When the tensors cannot be created, the deployment fails with the cause, after destroying
 * what was created on some ranks.
 *
 * <p>In a cluster, a coordinator whose node the others counted gone while it ran (a pause, a
 * partition: its node merges back) or whose rank names a newer owner of its group is displaced
 * ({@link Coordinator#displace}): it answers {@code DISPLACED} at once. It comes back only once it
 * knows it may ({@link Comeback}, from its ranks' answers): its node a member of the ranks' cluster
 * again (after the merge, when it was split off), and nobody else holding the group. Then the
 * verticle replaces it with a new incarnation: a new owner, an empty ledger (the ranks gave the old
 * owner's pages back, or the new owner's create-tensors reclaims them), the GPU shares claimed
 * afresh, and the last limit set at run time. When another node's coordinator serves the instance
 * (listed at the address, or holding the group on a rank) this one stays displaced and stops
 * answering at the address (its registration no longer kept), so that every request reaches the one
 * that serves; its own stats still say it is displaced.
 */
public final class CoordinatorVerticle extends VerticleBase {

    private static final Logger log = LoggerFactory.getLogger(CoordinatorVerticle.class);
    /**
     * How often a displaced coordinator asks its ranks again while it waits: often, since it answers
     * {@code DISPLACED} to every request meanwhile, and cheap (one small request per rank, none to a
     * rank whose node it counts gone).
     */
    static final long COMEBACK_RETRY_MS = 250;

    private volatile Coordinator coordinator;
    private volatile Thread thread;
    private KvCacheOptions options;
    private Runnable unsubscribe = () -> { };
    private volatile KeptRegistration kept;
    /** Its endpoint at the coordinator address; {@code null} while it stays displaced by another node's coordinator. */
    private MessageConsumer<Object> consumer;
    private boolean stopping;
    /** The ranks' answers on whether the displaced coordinator may come back, while asked; {@code null} otherwise. */
    private Future<Comeback> comebackCheck;
    /** The next time the ranks are asked, while a displaced coordinator waits; -1 when none is set. */
    private long comebackRetry = -1;
    /** The displaced incarnation that waits to come back, and what for (logged once each); {@code null} when none waits. */
    private Coordinator waiting;
    private Comeback.Verdict waitingFor;

    /** How to deploy a coordinator for {@code options}. */
    public static DeploymentOptions deploymentOptions(KvCacheOptions options) {
        return new DeploymentOptions().setConfig(options.toJson());
    }

    @Override
    public Future<?> start() {
        thread = Thread.currentThread();
        KvCacheOptions options;
        try {
            this.options = new KvCacheOptions(config()).validate();
            options = this.options;
            coordinator = incarnation(options);
        } catch (IllegalArgumentException e) {
            return Future.failedFuture(e);
        }
        return addressIsFree(vertx, options).compose(free -> {
            ClusterMembership membership = ClusterMembership.of(vertx);
            if (membership != null) {
                unsubscribe = membership.subscribeDisplacement(context, why -> coordinator.displace(why), this::rejoined);
            }
            Future<Void> started = coordinator.start();
            Future<Void> registered = listen();
            if (options.isLazyStart()) {
                return registered;
            }
            return registered.compose(v -> started)
                    .recover(e -> coordinator.close().transform(closed -> Future.failedFuture(e)));
        });
    }

    /** Registers its endpoint at the coordinator address and keeps the registration in the cluster. */
    private Future<Void> listen() {
        MessageConsumer<Object> listening = vertx.eventBus().consumer(coordinator.pool().coordinatorAddress(),
                new CoordinatorEndpoint(() -> coordinator));
        consumer = listening;
        return KeptRegistration.keep(vertx, listening).map(keeper -> {
            if (consumer == listening) {
                kept = keeper;
            } else {
                keeper.close();
            }
            return null;
        });
    }

    /**
     * Stops answering at the coordinator address: another node's coordinator serves it, and a
     * request the cluster routed here would get {@code DISPLACED} instead of being served there.
     * The registration is no longer kept, so it does not come back.
     *
     * @return done once the consumer's unregistration is (a failed one as well: it is no longer kept either way)
     */
    private Future<Void> silence() {
        KeptRegistration keeper = kept;
        kept = null;
        if (keeper != null) {
            keeper.close();
        }
        MessageConsumer<Object> listening = consumer;
        consumer = null;
        return listening == null ? Future.succeededFuture() : listening.unregister().recover(e -> Future.succeededFuture());
    }

    /**
     * Two consumers at one coordinator address would take turns answering, each for its own pool:
     * the start fails when another coordinator already answers there.
     */
    static Future<Void> addressIsFree(Vertx vertx, KvCacheOptions options) {
        return addressIsFree(vertx, options, 2);
    }

    /**
     * A request that times out is asked again, {@code asks} times in all: right after a coordinator
     * at the address was closed, the cluster can still route one request to its consumer's
     * registration while that is being removed (seen twice in the clustered tests, a cache
     * redeployed under the same instance name), whereas a live coordinator answers at once and a
     * paused one times out again.
     */
    private static Future<Void> addressIsFree(Vertx vertx, KvCacheOptions options, int asks) {
        String address = PoolRanks.of(options).coordinatorAddress();
        CoordinatorRequest pool = new CoordinatorRequest.Pool();
        DeliveryOptions ask = pool.action().delivery().setSendTimeout(Math.min(options.getSendTimeoutMs(), 5_000));
        return vertx.eventBus().request(address, pool.toJson(), ask).transform(ar -> {
            if (ar.failed() && ar.cause() instanceof ReplyException r && r.failureType() == ReplyFailure.NO_HANDLERS) {
                return Future.succeededFuture();
            }
            if (ar.failed() && ar.cause() instanceof ReplyException r && r.failureType() == ReplyFailure.TIMEOUT && asks > 1) {
                return addressIsFree(vertx, options, asks - 1);
            }
            String other = ar.succeeded() ? " serving " + ar.result().body() : " (" + ar.cause().getMessage() + ")";
            return Future.failedFuture(new IllegalArgumentException("instance " + options.getInstance()
                    + " already has a coordinator at " + address + other + "; one cache per instance name"));
        });
    }

    /** A coordinator that, displaced by a rank's 409, comes back as soon as it is displaced: that rank is reachable. */
    private Coordinator incarnation(KvCacheOptions options) {
        Coordinator born = new Coordinator(vertx, context, options);
        born.onDisplacedByRank(() -> {
            ClusterMembership membership = ClusterMembership.of(vertx);
            if (membership == null || membership.displacedBecause() == null) {
                reincarnate();
            }
        });
        return born;
    }

    /**
     * Replaces the displaced coordinator with a new incarnation once it knows it may
     * ({@link Comeback}): not while its node is merging back (the merge's end calls this again), not
     * while another node's coordinator serves the instance (it stays displaced and silent), and not
     * while a rank says its node is split off from the ranks' cluster or no rank answers (right
     * after a pause its node drops the ranks' nodes, and their consumers with them, until the
     * merge): it asks again every {@value #COMEBACK_RETRY_MS} ms, and at the merge's end. The old
     * incarnation is abandoned, giving back its GPU shares; the new one starts with the last limit.
     */
    private void reincarnate() {
        Coordinator old = coordinator;
        if (stopping || old.displacedBecause() == null || comebackCheck != null) {
            return;
        }
        ClusterMembership membership = ClusterMembership.of(vertx);
        if (membership != null && membership.displacedBecause() != null) {
            // merging back: the merge's end calls this again
            return;
        }
        String address = old.pool().coordinatorAddress();
        Future<java.util.List<String>> serving = membership == null ? Future.succeededFuture(java.util.List.of())
                : membership.nodesServing(context, address);
        Future<Comeback> checked = serving.transform(ar -> {
            java.util.List<String> others = ar.succeeded() ? ar.result().stream().filter(n -> !n.equals(membership.nodeId())).toList()
                    : java.util.List.of();
            if (!others.isEmpty()) {
                return Future.succeededFuture(new Comeback(Comeback.Verdict.ANOTHER_OWNER, "another coordinator serves instance "
                        + old.pool().instance() + " on node " + others));
            }
            return old.comeback();
        });
        comebackCheck = checked;
        checked.onComplete(ar -> {
            comebackCheck = null;
            if (stopping || coordinator != old) {
                return;
            }
            if (membership != null && membership.displacedBecause() != null) {
                // the node began merging back while its ranks were asked: the merge's end asks them again
                return;
            }
            Comeback comeback = ar.succeeded() ? ar.result() : new Comeback(Comeback.Verdict.UNANSWERED, ar.cause().toString());
            decide(old, comeback, address);
        });
    }

    private void decide(Coordinator old, Comeback comeback, String address) {
        switch (comeback.verdict()) {
            case ANOTHER_OWNER -> {
                boolean answered = consumer != null;
                // said once the address is no longer registered here, so that what the line says is true when it is read
                silence().onComplete(ar -> log.warn("cache {} group {}: {}; this one stays displaced{}", old.pool().instance(),
                        old.pool().group(), comeback.detail(), answered ? " and no longer answers at " + address : ""));
            }
            case SPLIT_OFF, UNANSWERED -> {
                if (waiting != old || waitingFor != comeback.verdict()) {
                    waiting = old;
                    waitingFor = comeback.verdict();
                    log.warn("cache {} group {}: owner {} stays displaced {}: {}; it comes back once {}", old.pool().instance(),
                            old.pool().group(), old.owner(), comeback.verdict() == Comeback.Verdict.SPLIT_OFF
                                    ? "while its node is split off from the ranks' cluster" : "until a rank answers",
                            comeback.detail(), comeback.verdict() == Comeback.Verdict.SPLIT_OFF ? "the node has merged back"
                                    : "a rank says nobody else holds the group");
                }
                askAgain();
            }
            case CLAIM -> claim(old, address);
        }
    }

    /** Asks the ranks again in {@value #COMEBACK_RETRY_MS} ms, unless a check is due already. */
    private void askAgain() {
        if (comebackRetry < 0 && !stopping) {
            comebackRetry = vertx.setTimer(COMEBACK_RETRY_MS, id -> {
                comebackRetry = -1;
                reincarnate();
            });
        }
    }

    /** The node merged back into the whole cluster: asks the ranks at once. */
    private void rejoined() {
        reincarnate();
    }

    /** Starts a new incarnation in place of {@code old}, which is abandoned. */
    private void claim(Coordinator old, String address) {
        Coordinator born = incarnation(options);
        born.reclaims().takeOver(old.reclaims());
        LimitResult limit = old.lastLimit();
        if (limit != null) {
            born.setMemoryLimit(limit.limitBytes(), limit.revision());
        }
        // started before it serves: a call that reaches it waits for its tensors
        born.start().onFailure(e -> log.error("cache {} group {}: the new incarnation did not start: {}",
                old.pool().instance(), old.pool().group(), e.getMessage()));
        coordinator = born;
        if (consumer == null) {
            // it had stopped answering for another coordinator, which is gone now
            listen().onFailure(e -> log.error("cache {} group {}: the new incarnation does not answer at {}: {}",
                    old.pool().instance(), old.pool().group(), address, e.getMessage()));
        }
        log.info("cache {} group {}: back as owner {} after owner {} was displaced; its ledger starts empty",
                old.pool().instance(), old.pool().group(), born.owner(), old.owner());
        old.abandon();
    }

    @Override
    public Future<?> stop() {
        stopping = true;
        unsubscribe.run();
        if (comebackRetry >= 0) {
            vertx.cancelTimer(comebackRetry);
        }
        KeptRegistration keeper = kept;
        if (keeper != null) {
            keeper.close();
        }
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
