package io.kvpager.impl.coordinator;

import io.kvpager.protocol.RankTarget;
import io.kvpager.protocol.WorkerProtocol;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.Vertx;
import io.vertx.core.eventbus.DeliveryOptions;
import io.vertx.core.eventbus.EventBus;
import io.vertx.core.eventbus.ReplyException;
import io.vertx.core.eventbus.ReplyFailure;
import io.vertx.core.json.JsonObject;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * Names a rank whose process stopped running (paused, frozen, cut off) within about
 * {@code afterMs + timeoutMs}, instead of the send timeout or the cluster's removal of its node.
 *
 * <p>A request to a rank that is still unanswered {@code afterMs} after it was sent makes the probe
 * ask the rank's liveness address ({@link WorkerProtocol#aliveAddress}), which the worker answers
 * from an event loop, off the rank's thread: a rank busy in a long driver call answers it, and the
 * request keeps waiting for its own answer or its send timeout (probed again every
 * {@code afterMs}). A probe unanswered within {@code timeoutMs} fails the request with
 * {@link Silent}, which the fan-out reports as the rank's {@code TIMEOUT}: what the rank holds of
 * the request is unknown, exactly as when the send timeout passes. A probe that finds no consumer
 * (a worker stopping, or one without the address) changes nothing: the request's own answer or
 * timeout decides.
 *
 * <p>One probe per rank at a time: the requests to a rank that fall due while its probe is out
 * wait for that probe's answer, so a hundred requests in flight to a paused rank cost one probe,
 * not a hundred. One periodic timer looks at the requests outstanding, and runs only while there
 * are some; a request answered before {@code afterMs} costs an entry in a set. Confined to the
 * fan-out's context.
 */
final class RankProbe {

    private final Vertx vertx;
    private final EventBus bus;
    private final long afterMs;
    private final long timeoutMs;
    private final Set<Watch> outstanding = new LinkedHashSet<>();
    /** Per rank address, the requests waiting for the probe out to it now. */
    private final Map<String, List<Watch>> probing = new HashMap<>();
    private long probesSent;
    private long timer = -1;

    /**
     * @param afterMs   how long a request waits for its answer before the rank is probed, and between probes
     * @param timeoutMs how long a probe waits for its answer
     */
    RankProbe(Vertx vertx, EventBus bus, long afterMs, long timeoutMs) {
        if (afterMs <= 0 || timeoutMs <= 0) {
            throw new IllegalArgumentException("a rank probe needs a wait and a timeout above 0 ms, got " + afterMs + " and " + timeoutMs);
        }
        this.vertx = vertx;
        this.bus = bus;
        this.afterMs = afterMs;
        this.timeoutMs = timeoutMs;
    }

    /** How many probes were sent. */
    long probesSent() {
        return probesSent;
    }

    /** How long after a request is sent, at most, a silent rank is named: the wait, then the probe's timeout. */
    long boundMs() {
        return afterMs + timeoutMs;
    }

    /**
     * The outcome of {@code request} to {@code rank}: its own, or {@link Silent} once a probe went
     * unanswered. A send timeout no longer than the wait leaves the request to it.
     */
    <T> Future<T> watch(RankTarget rank, String rankAddress, String action, long sendTimeoutMs, Future<T> request) {
        if (request.isComplete() || afterMs >= sendTimeoutMs) {
            return request;
        }
        Promise<T> outcome = Promise.promise();
        Watch watch = new Watch(rank, rankAddress, action, System.nanoTime(), outcome);
        outstanding.add(watch);
        request.onComplete(done -> {
            outstanding.remove(watch);
            if (done.succeeded()) {
                outcome.tryComplete(done.result());
            } else {
                outcome.tryFail(done.cause());
            }
        });
        if (timer < 0) {
            timer = vertx.setPeriodic(Math.max(1, afterMs / 4), id -> tick());
        }
        return outcome.future();
    }

    private void tick() {
        if (outstanding.isEmpty()) {
            vertx.cancelTimer(timer);
            timer = -1;
            return;
        }
        long now = System.nanoTime();
        Map<String, List<Watch>> due = new LinkedHashMap<>();
        for (Watch watch : outstanding) {
            if (!watch.probing && now - watch.lastHeardNanos >= afterMs * 1_000_000) {
                due.computeIfAbsent(watch.rankAddress, a -> new ArrayList<>()).add(watch);
            }
        }
        due.forEach((address, watches) -> {
            watches.forEach(watch -> watch.probing = true);
            List<Watch> waiting = probing.get(address);
            if (waiting != null) {
                // the rank's probe is out: its answer is theirs too
                waiting.addAll(watches);
            } else {
                probe(address, new ArrayList<>(watches));
            }
        });
    }

    private void probe(String rankAddress, List<Watch> waiting) {
        probing.put(rankAddress, waiting);
        probesSent++;
        long sentAt = System.nanoTime();
        DeliveryOptions delivery = new DeliveryOptions().setSendTimeout(timeoutMs);
        bus.request(WorkerProtocol.aliveAddress(rankAddress), new JsonObject(), delivery).onComplete(answer -> {
            probing.remove(rankAddress);
            long waitedMs = (System.nanoTime() - sentAt) / 1_000_000;
            boolean silent = answer.failed() && answer.cause() instanceof ReplyException r && r.failureType() == ReplyFailure.TIMEOUT
                    && waitedMs >= timeoutMs;
            for (Watch watch : waiting) {
                watch.probing = false;
                if (answer.succeeded()) {
                    watch.lastHeardNanos = System.nanoTime();
                } else if (silent) {
                    outstanding.remove(watch);
                    long outstandingMs = (System.nanoTime() - watch.sentNanos) / 1_000_000;
                    watch.outcome.tryFail(new Silent(watch.rank.name() + " did not answer " + watch.action + " within " + outstandingMs
                            + " ms, nor a liveness probe within " + timeoutMs + " ms (" + watch.rankAddress
                            + "): its process is not running (paused, or cut off from this node)"));
                } else {
                    // no consumer for probes (stopping, or a worker without one): the request's own answer decides
                    outstanding.remove(watch);
                }
            }
        });
    }

    /** A request whose rank went silent: neither the request nor a liveness probe was answered. */
    static final class Silent extends RuntimeException {
        Silent(String message) {
            super(message, null, false, false);
        }
    }

    private static final class Watch {
        final RankTarget rank;
        final String rankAddress;
        final String action;
        final long sentNanos;
        final Promise<?> outcome;
        long lastHeardNanos;
        boolean probing;

        Watch(RankTarget rank, String rankAddress, String action, long sentNanos, Promise<?> outcome) {
            this.rank = rank;
            this.rankAddress = rankAddress;
            this.action = action;
            this.sentNanos = sentNanos;
            this.lastHeardNanos = sentNanos;
            this.outcome = outcome;
        }
    }
}
