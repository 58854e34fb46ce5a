package io.kvpager.impl.coordinator;

import io.kvpager.protocol.PoolRanks;
import io.kvpager.protocol.RankTarget;
import io.kvpager.FailureCode;
import io.kvpager.internal.membership.RankDeparted;
import io.kvpager.internal.membership.RankNodes;
import io.kvpager.protocol.Owner;
import io.kvpager.protocol.RequestFields;
import io.kvpager.protocol.WorkerAction;
import io.kvpager.protocol.WorkerProtocol;
import io.kvpager.protocol.WorkerRequest;
import io.kvpager.internal.membership.RankDeparted;
import io.kvpager.internal.membership.RankNodes;
import io.kvpager.protocol.TensorsCreatedReply;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.eventbus.DeliveryOptions;
import io.vertx.core.eventbus.EventBus;
import io.vertx.core.eventbus.Message;
import io.vertx.core.eventbus.ReplyException;
import io.vertx.core.eventbus.ReplyFailure;
import io.vertx.core.json.JsonObject;

import java.util.ArrayList;
import java.util.EnumSet;
import java.util.Set;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.UUID;
import java.util.function.Consumer;

/**
 * Sends one request to each of a pool's ranks and waits, with {@link Future#join}, until every
 * one has answered, failed, or run past the send timeout, so the caller decides on the whole
 * picture and never on the first failure alone.
 *
 * <p>A request is one of the protocol's records ({@link WorkerRequest}), written once; the fan-out
 * adds only the routing envelope, the target rank's {@code pp} and {@code tp}, to each rank's copy,
 * and a worker refuses a request whose {@code pp} or {@code tp} is not its own. A request for
 * another group than the pool's, or sent as another owner than the fan-out's (the coordinator
 * incarnation the group's tensors belong to), is refused before anything is sent. Each map, unmap
 * and release-pages request carries a fresh {@code requestId} ({@link #nextRequestId}); the prefix is
 * random per fan-out so a restarted coordinator never collides with a worker's memory of earlier
 * requests.
 *
 * <p>Every request goes through the pool's {@link RankNodes}, which fails it at once when the
 * rank's node has left the cluster (in flight or before it is sent); such a rank answers
 * {@link FailureCode#NO_RANK}, like a rank with no worker.
 *
 * <p>Every request asks for failures with fields ({@link WorkerProtocol#askForFailureFields}), so
 * that a rank's failure arrives as a {@link io.kvpager.cache.RankFailure} whose decisions
 * ({@code rollbackComplete}, {@code unrestoredPages}) nobody has to read from its text.
 *
 * <p>Requests must be sent from the coordinator's context: their replies complete there.
 */
public final class RankFanOut {

    /** The requests whose success proves, to their owner, that it holds the group on the rank. */
    private static final Set<WorkerAction> OWNED_ACTIONS = EnumSet.of(WorkerAction.MAP, WorkerAction.UNMAP,
            WorkerAction.RELEASE_PAGES, WorkerAction.TENSORS_CREATED);

    private final EventBus bus;
    private final PoolRanks pool;
    private final RankNodes nodes;
    private final long sendTimeoutMs;
    private final Owner owner;
    private final String requestPrefix = UUID.randomUUID().toString();
    private long requests;
    private Consumer<String> ownerConflict = why -> { };
    private final OwnerLease lease;
    /** Names a silent rank before the send timeout; {@code null}: the send timeout alone does. */
    private RankProbe probe;

    /** A fan-out outside a cluster, or one that does not follow its membership, as an owner of its own. */
    public RankFanOut(EventBus bus, PoolRanks pool, long sendTimeoutMs) {
        this(bus, pool, RankNodes.local(pool), sendTimeoutMs);
    }

    /** A fan-out as an owner of its own, which no other fan-out shares: for tools that drive ranks directly. */
    public RankFanOut(EventBus bus, PoolRanks pool, RankNodes nodes, long sendTimeoutMs) {
        this(bus, pool, nodes, sendTimeoutMs, new Owner("fan-out-" + UUID.randomUUID(), 0));
    }

    /** @param owner the coordinator incarnation whose requests these are */
    public RankFanOut(EventBus bus, PoolRanks pool, RankNodes nodes, long sendTimeoutMs, Owner owner) {
        this.bus = bus;
        this.pool = pool;
        this.nodes = nodes;
        this.sendTimeoutMs = sendTimeoutMs;
        this.owner = owner;
        this.lease = new OwnerLease(pool.ranks());
    }

    /**
     * Probes a rank whose request is unanswered {@code afterMs} after it was sent, and fails the
     * request as the rank's {@link FailureCode#TIMEOUT} when the probe is not answered within
     * {@code timeoutMs} ({@link RankProbe}). Call before the first request, on the fan-out's context.
     */
    public RankFanOut probeSilentRanks(Vertx vertx, long afterMs, long timeoutMs) {
        this.probe = new RankProbe(vertx, bus, afterMs, timeoutMs);
        return this;
    }

    /** How long this owner knows every rank keeps the group for it, from the ranks' answers. */
    OwnerLease lease() {
        return lease;
    }

    /**
     * Calls {@code displaced} with the rank's words when a rank refuses a request because the
     * group belongs to another owner now (409), or because this owner lost it there to a newer
     * one: another incarnation claimed the pool while this one was cut off.
     */
    public void onOwnerConflict(Consumer<String> displaced) {
        this.ownerConflict = displaced;
    }

    /** Whose requests these are. */
    public Owner owner() {
        return owner;
    }

    public PoolRanks pool() {
        return pool;
    }

    public long sendTimeoutMs() {
        return sendTimeoutMs;
    }

    /** A request id no earlier request of this fan-out, nor of another, carries: for map, unmap and release-pages. */
    public String nextRequestId() {
        return requestPrefix + "-" + (++requests);
    }

    /** {@link #send} to every rank of the pool with the send timeout. */
    public Future<List<RankReply>> toAll(WorkerRequest request) {
        return send(pool.ranks(), request, sendTimeoutMs);
    }

    /**
     * Sends {@code request} to each of {@code ranks}, each copy with the rank's pp and tp. The future
     * never fails: it holds one {@link RankReply} per rank, in the order given.
     *
     * @throws IllegalArgumentException when the request is for another group than the pool's or
     *                                  names another owner than this fan-out's; nothing is sent
     */
    public Future<List<RankReply>> send(List<RankTarget> ranks, WorkerRequest request, long timeoutMs) {
        if (request.group() != -1 && request.group() != pool.group() || request.owner() != null && !request.owner().equals(owner)) {
            throw new IllegalArgumentException("a fan-out of group " + pool.group() + " as " + owner + " cannot send " + request);
        }
        WorkerAction action = request.action();
        DeliveryOptions delivery = WorkerProtocol.askForFailureFields(bus, action.delivery().setSendTimeout(timeoutMs));
        JsonObject fields = request.toJson();
        long sentAt = System.nanoTime();
        List<Future<Message<Object>>> sent = new ArrayList<>(ranks.size());
        for (RankTarget rank : ranks) {
            // one level deep: the ranks' bodies share the request's values (the page array, say),
            // which nobody changes once sent; the bus copies a body before its consumer sees it
            JsonObject body = new JsonObject(new LinkedHashMap<>(fields.getMap()))
                    .put(RequestFields.PP, rank.pp()).put(RequestFields.TP, rank.tp());
            String address = rank.address(pool.instance());
            Future<Message<Object>> answer = nodes.request(rank, action.wireName(), () -> bus.request(address, body, delivery));
            sent.add(probe == null ? answer : probe.watch(rank, address, action.wireName(), timeoutMs, answer));
        }
        boolean owned = request.owner() != null && OWNED_ACTIONS.contains(action);
        return Future.join(sent).transform(joined -> {
            List<RankReply> replies = new ArrayList<>(ranks.size());
            for (int i = 0; i < ranks.size(); i++) {
                RankReply reply = replyOf(ranks.get(i), action.wireName(), timeoutMs, sentAt, sent.get(i));
                replies.add(reply);
                if (owned && reply.succeeded()) {
                    confirmLease(reply, action, sentAt);
                }
                if (action != WorkerAction.STATS && isOwnerConflict(reply)) {
                    ownerConflict.accept(reply.failure().toString());
                }
            }
            return Future.succeededFuture(replies);
        });
    }

    /**
     * A rank's success as this owner proves the group is the owner's there for the lease it states;
     * a tensors-created that says the group is not (or no longer) the owner's proves nothing.
     */
    private void confirmLease(RankReply reply, WorkerAction action, long sentAt) {
        if (action == WorkerAction.TENSORS_CREATED && !Boolean.TRUE.equals(reply.body().getValue(TensorsCreatedReply.CREATED))) {
            return;
        }
        try {
            lease.confirmed(reply.rank(), sentAt, WorkerProtocol.leaseMsOf(reply.body()));
        } catch (IllegalArgumentException malformed) {
            // an answer with a malformed lease confirms nothing: the next check asks again
        }
    }

    /** A 409 that says the group is not this owner's: the worker's words for another owner's group or a lost one. */
    private static boolean isOwnerConflict(RankReply reply) {
        if (reply.succeeded() || reply.code() != FailureCode.CONFLICT) {
            return false;
        }
        String message = reply.failure().toString();
        return message.contains("the request's owner") || message.contains("cannot claim it again");
    }

    private RankReply replyOf(RankTarget rank, String action, long timeoutMs, long sentAt, Future<Message<Object>> answer) {
        if (answer.succeeded()) {
            Object body = answer.result().body();
            if (body == null || body instanceof JsonObject) {
                return RankReply.ok(rank, (JsonObject) body);
            }
            return RankReply.failed(rank, FailureCode.DRIVER_ERROR, rank.name() + " answered " + action
                    + " with a " + body.getClass().getSimpleName() + " instead of a JSON object");
        }
        Throwable cause = answer.cause();
        String address = rank.address(pool.instance());
        if (cause instanceof RankProbe.Silent silent) {
            return RankReply.failed(rank, FailureCode.TIMEOUT, silent.getMessage());
        }
        if (cause instanceof RankDeparted departed) {
            return RankReply.failed(rank, FailureCode.NO_RANK, departed.getMessage());
        }
        io.kvpager.cache.RankFailure fields = WorkerProtocol.failureOf(cause);
        if (fields != null) {
            return RankReply.failed(rank, fields);
        }
        if (cause instanceof ReplyException reply) {
            return switch (reply.failureType()) {
                case RECIPIENT_FAILURE -> RankReply.failed(rank, FailureCode.of(reply.failureCode()), reply.getMessage());
                case TIMEOUT -> timedOutOrDiscarded(rank, action, timeoutMs, sentAt, address, reply);
                case NO_HANDLERS -> RankReply.failed(rank, FailureCode.NO_RANK, "no worker for " + rank.name() + " at "
                        + address + " (not deployed, or stopped): " + reply.getMessage());
                case ERROR -> RankReply.failed(rank, FailureCode.DRIVER_ERROR, rank.name() + " " + action
                        + " could not be delivered: " + reply.getMessage());
            };
        }
        return RankReply.failed(rank, FailureCode.DRIVER_ERROR, rank.name() + " " + action + " failed: " + cause);
    }

    /**
     * Vert.x fails a request with {@link ReplyFailure#TIMEOUT} both when its send timer expires
     * and when the consumer discards it unhandled (a worker whose verticle is being undeployed
     * drops what is still queued for it). Only the first is a timeout: the timer cannot have
     * expired before the send timeout has passed. A discarded request never reached the worker's
     * handler, so it changed nothing there; it is {@link FailureCode#STOPPING}, with the bus's own
     * text kept.
     */
    private static RankReply timedOutOrDiscarded(RankTarget rank, String action, long timeoutMs, long sentAt, String address,
                                                 ReplyException reply) {
        long elapsedMs = (System.nanoTime() - sentAt) / 1_000_000;
        if (elapsedMs >= timeoutMs) {
            return RankReply.failed(rank, FailureCode.TIMEOUT, rank.name() + " did not answer " + action + " within " + timeoutMs
                    + " ms (" + address + "): " + reply.getMessage());
        }
        return RankReply.failed(rank, FailureCode.STOPPING, rank.name() + " dropped " + action + " unhandled after " + elapsedMs
                + " ms, its worker stopping (" + address + "): " + reply.getMessage());
    }

    /** The failures among {@code replies}, in rank order. */
    public static List<io.kvpager.cache.RankFailure> failures(List<RankReply> replies) {
        List<io.kvpager.cache.RankFailure> failures = new ArrayList<>();
        for (RankReply r : replies) {
            if (!r.succeeded()) {
                failures.add(r.failure());
            }
        }
        return failures;
    }
}
