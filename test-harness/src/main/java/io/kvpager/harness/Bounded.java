package io.kvpager.harness;

import io.vertx.core.Future;

import java.time.Duration;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * Waiting on a future from a thread outside Vert.x, never longer than a bound: a future that does
 * not complete in time is a {@link StuckFuture}, and says so instead of hanging the run.
 */
public final class Bounded {

    private Bounded() {
    }

    /**
     * The result of {@code future}.
     *
     * @param what the awaited operation in words, for the failure
     * @throws StuckFuture when it has not completed within {@code bound}
     * @throws RuntimeException the future's failure (wrapped in an {@link IllegalStateException} when checked)
     */
    public static <T> T await(Future<T> future, Duration bound, String what) {
        try {
            return future.toCompletionStage().toCompletableFuture().get(bound.toNanos(), TimeUnit.NANOSECONDS);
        } catch (ExecutionException e) {
            throw e.getCause() instanceof RuntimeException r ? r : new IllegalStateException(what + " failed", e.getCause());
        } catch (TimeoutException e) {
            throw new StuckFuture(what + " did not complete within " + bound.toMillis() + " ms");
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted while waiting for " + what, e);
        }
    }

    /** A future that did not complete within its bound. */
    public static final class StuckFuture extends IllegalStateException {
        public StuckFuture(String message) {
            super(message);
        }
    }
}
