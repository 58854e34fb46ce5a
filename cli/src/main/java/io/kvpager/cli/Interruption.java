package io.kvpager.cli;

import io.vertx.core.Future;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

/**
 * Lets a command that runs for a while end early and still report: when the process is asked to
 * stop (Ctrl-C, SIGTERM) or the command line's stop signal completes, {@code onStop} runs, and
 * the JVM's shutdown waits (up to {@value #GRACE_S} s) until the command has printed what it has
 * and closed this.
 */
final class Interruption implements AutoCloseable {

    private static final long GRACE_S = 60;

    private final CountDownLatch finished = new CountDownLatch(1);
    private final Thread hook;

    Interruption(Runnable onStop, Future<?> stop) {
        hook = new Thread(() -> {
            onStop.run();
            try {
                finished.await(GRACE_S, TimeUnit.SECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }, "kvpager-interruption");
        Runtime.getRuntime().addShutdownHook(hook);
        if (stop != null) {
            stop.onComplete(x -> onStop.run());
        }
    }

    /** The command has reported: the shutdown, if one is under way, may go on. */
    @Override
    public void close() {
        finished.countDown();
        try {
            Runtime.getRuntime().removeShutdownHook(hook);
        } catch (IllegalStateException shuttingDown) {
            // the hook runs and returns at once now
        }
    }
}
