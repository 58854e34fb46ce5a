package io.kvpager.impl.coordinator;

import io.vertx.core.Vertx;

/**
 * One Vert.x periodic timer of a coordinator's background task (the reserve's refill, the
 * quarantine sweep, the idle handles, the rejoin of lost ranks): started once, stopped any number
 * of times. Its ticks run on the context that started it.
 */
final class PeriodicTimer {

    private final Vertx vertx;
    private long id = -1;

    PeriodicTimer(Vertx vertx) {
        this.vertx = vertx;
    }

    /** Runs {@code tick} every {@code periodMs} from now on; nothing when already started. */
    void start(long periodMs, Runnable tick) {
        if (id < 0) {
            id = vertx.setPeriodic(periodMs, timer -> tick.run());
        }
    }

    /** No more ticks. */
    void stop() {
        if (id >= 0) {
            vertx.cancelTimer(id);
            id = -1;
        }
    }
}
