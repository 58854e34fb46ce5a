package io.kvpager.impl.coordinator;

import io.kvpager.cache.Reclaim;
import io.vertx.core.Handler;
import io.vertx.core.Vertx;
import io.vertx.core.internal.ContextInternal;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Where a cache tells its engine to give memory back: the engine's {@link Reclaim} handler, run on
 * the context it was set from (or the cache's callback context for a thread without one), and the
 * event bus at {@link Reclaim#address}, published whether a handler is set or not. Set from any
 * thread; raised from the coordinator's context.
 */
final class ReclaimSignal {

    private static final Logger log = LoggerFactory.getLogger(ReclaimSignal.class);

    private final Vertx vertx;
    private final String instance;
    private final ContextInternal fallback;
    private volatile Target target;

    private record Target(Handler<Reclaim> handler, ContextInternal context) {
    }

    ReclaimSignal(Vertx vertx, String instance, ContextInternal fallback) {
        this.vertx = vertx;
        this.instance = instance;
        this.fallback = fallback;
    }

    /** Sets the handler, bound to the calling thread's context; {@code null} removes it. */
    void handler(Handler<Reclaim> handler) {
        if (handler == null) {
            target = null;
            return;
        }
        ContextInternal caller = (ContextInternal) Vertx.currentContext();
        target = new Target(handler, caller != null ? caller : fallback);
    }

    /** Takes the engine's handler from {@code before}, the signal of the incarnation this one replaces. */
    void takeOver(ReclaimSignal before) {
        target = before.target;
    }

    /** Whether an engine handles reclaims here. */
    boolean handled() {
        return target != null;
    }

    /** Tells the engine: its handler, and the event bus. */
    void raise(Reclaim reclaim) {
        vertx.eventBus().publish(Reclaim.address(instance), reclaim.toJson());
        Target now = target;
        if (now != null) {
            now.context().runOnContext(v -> {
                try {
                    now.handler().handle(reclaim);
                } catch (RuntimeException e) {
                    log.error("cache {}: the engine's reclaim handler failed on {}: {}", instance, reclaim, e.toString());
                }
            });
        }
    }
}
