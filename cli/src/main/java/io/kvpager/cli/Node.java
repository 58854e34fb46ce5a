package io.kvpager.cli;

import io.vertx.core.Vertx;
import io.vertx.core.VertxOptions;
import java.util.concurrent.TimeUnit;

/**
 * The Vert.x a command runs in: its own, started for the command and closed after it, or one that
 * an embedding program (a test, a serving process) already runs its caches in, which the command
 * borrows and leaves running.
 */
final class Node implements AutoCloseable {

    private static final long CLOSE_TIMEOUT_S = 30;

    private final Vertx vertx;
    private final boolean owned;

    private Node(Vertx vertx, boolean owned) {
        this.vertx = vertx;
        this.owned = owned;
    }

    static Node start(VertxOptions options) {
        return new Node(Vertx.vertx(options), true);
    }

    static Node borrow(Vertx vertx) {
        return new Node(vertx, false);
    }

    Vertx vertx() {
        return vertx;
    }

    @Override
    public void close() {
        if (owned) {
            try {
                vertx.close().await(CLOSE_TIMEOUT_S, TimeUnit.SECONDS);
            } catch (Exception e) {
                throw new IllegalStateException("Vert.x did not close within " + CLOSE_TIMEOUT_S + " s: " + OneLine.of(e), e);
            }
        }
    }
}
