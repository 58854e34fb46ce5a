package io.kvpager.harness;

import io.kvpager.protocol.WorkerAction;
import io.vertx.core.Future;
import io.vertx.core.Handler;
import io.vertx.core.Vertx;
import io.vertx.core.eventbus.DeliveryContext;
import io.vertx.core.eventbus.Message;
import io.vertx.core.json.JsonObject;

import java.util.function.Function;

/**
 * An outbound interceptor on a Vert.x event bus that lets a test step into one request between a
 * coordinator and a rank: act on its body before it is delivered (arm a fault for the pages it
 * names), hold it until something is done (stop the rank, so that it is delivered to no one), or
 * let it through and drop the rank's answer (so that the sender times out, as when a reply is lost
 * on the network). Replies pass outbound interceptors too, which is how the answer is recognised:
 * it is sent to the request's reply address.
 *
 * <p>One step at a time, aimed at the first matching request after {@link #interceptFirst}; every
 * other message passes untouched. Thread-safe: requests are seen on the sender's thread, answers on
 * the rank's.
 */
public final class BusTap implements Handler<DeliveryContext<Object>> {

    private final Vertx vertx;
    private String address;
    private String action;
    private Function<JsonObject, Future<?>> before;
    private boolean dropAnswer;
    private String answerAddress;
    private boolean seen;
    private JsonObject seenBody;
    private boolean dropped;
    private Throwable stepFailure;

    private BusTap(Vertx vertx) {
        this.vertx = vertx;
    }

    /** Adds a tap to {@code vertx}'s event bus; {@link #remove()} takes it off again. */
    public static BusTap install(Vertx vertx) {
        BusTap tap = new BusTap(vertx);
        vertx.eventBus().addOutboundInterceptor(tap);
        return tap;
    }

    public void remove() {
        vertx.eventBus().removeOutboundInterceptor(this);
    }

    /**
     * Aims at the first request of {@code action} (the {@code action} header) sent to
     * {@code address} from now on, replacing any earlier aim.
     *
     * @param before runs with the request's body before it is delivered; the request is delivered
     *     once the future it returns completes, whatever its outcome
     * @param dropAnswer whether the rank's answer to it is dropped
     */
    public synchronized void interceptFirst(String address, String action, Function<JsonObject, Future<?>> before,
                                            boolean dropAnswer) {
        this.address = address;
        this.action = action;
        this.before = before;
        this.dropAnswer = dropAnswer;
        this.answerAddress = null;
        this.seen = false;
        this.seenBody = null;
        this.dropped = false;
        this.stepFailure = null;
    }

    /** Stops aiming; messages in flight are no longer touched. */
    public synchronized void clear() {
        address = null;
        action = null;
        before = null;
        answerAddress = null;
    }

    /** Whether the aimed request has gone by. */
    public synchronized boolean seen() {
        return seen;
    }

    /** A copy of the aimed request's body, once it has gone by. */
    public synchronized JsonObject body() {
        return seenBody == null ? null : seenBody.copy();
    }

    /** Whether its answer was dropped. */
    public synchronized boolean dropped() {
        return dropped;
    }

    /** How the step run before delivery failed, or {@code null}: the request was delivered all the same. */
    public synchronized Throwable stepFailure() {
        return stepFailure;
    }

    @Override
    public void handle(DeliveryContext<Object> delivery) {
        Message<Object> message = delivery.message();
        Function<JsonObject, Future<?>> step = null;
        JsonObject body = null;
        synchronized (this) {
            if (answerAddress != null && answerAddress.equals(message.address())) {
                answerAddress = null;
                dropped = true;
                return; // not passed on: the answer is lost
            }
            if (!seen && address != null && address.equals(message.address())
                    && action.equals(message.headers().get(WorkerAction.HEADER))
                    && delivery.body() instanceof JsonObject json) {
                seen = true;
                seenBody = json.copy();
                step = before;
                body = json;
                if (dropAnswer) {
                    answerAddress = message.replyAddress();
                }
            }
        }
        if (step == null) {
            delivery.next();
            return;
        }
        Future<?> done;
        try {
            done = step.apply(body.copy());
        } catch (RuntimeException e) {
            done = Future.failedFuture(e);
        }
        done.onComplete(ar -> {
            if (ar.failed()) {
                synchronized (this) {
                    stepFailure = ar.cause();
                }
            }
            delivery.next();
        });
    }
}
