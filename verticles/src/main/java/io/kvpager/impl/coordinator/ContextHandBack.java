package io.kvpager.impl.coordinator;

import io.vertx.core.Vertx;
import io.vertx.core.internal.ContextInternal;
import io.vertx.core.internal.PromiseInternal;
import io.vertx.core.internal.VertxInternal;

/**
 * Where a cache hands its answers back: a promise bound to the caller's context, as the Vert.x
 * clients do it. The caller's callbacks run on the context it called from (an event loop, a
 * worker, a duplicated context: {@link Vertx#currentContext()} inside the callback is the one it
 * called from), whichever thread completed the answer.
 *
 * <p>A caller without a Vert.x context (a thread of its own) has its callbacks run on this
 * cache's callback context, a worker context on the Vert.x worker pool, one callback at a time in
 * the order the answers came: never on the coordinator's event loop, so a callback that blocks
 * delays the next such callback, not the ledger and every other caller. {@code await()} from such
 * a thread returns once that context has seen the answer.
 */
final class ContextHandBack {

    private final ContextInternal callbacks;

    ContextHandBack(Vertx vertx) {
        this.callbacks = ((VertxInternal) vertx).createWorkerContext();
    }

    /** A promise whose future runs its callbacks on the calling thread's context, or on the callback context. */
    <T> PromiseInternal<T> promise() {
        ContextInternal caller = (ContextInternal) Vertx.currentContext();
        return (caller != null ? caller : callbacks).promise();
    }

    /** The context that runs the callbacks of callers without one. */
    ContextInternal callbacks() {
        return callbacks;
    }
}
