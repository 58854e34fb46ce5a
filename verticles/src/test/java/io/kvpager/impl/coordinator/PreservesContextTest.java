package io.kvpager.impl.coordinator;

import io.kvpager.Allocation;
import io.kvpager.cache.KvCache;
import io.kvpager.cache.KvCacheOptions;
import io.kvpager.cache.SimPool;
import io.reactivex.rxjava3.core.Completable;
import io.reactivex.rxjava3.core.Single;
import io.vertx.core.Context;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.internal.ContextInternal;
import io.vertx.core.internal.VertxInternal;
import io.vertx.junit5.VertxExtension;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Supplier;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Every {@link KvCache} method and every method of its RxJava 3 face, called from an event loop,
 * a worker context, a duplicated context and a thread of the caller's own: each answer's callback
 * runs on the context it was called from, and for a thread without one on the cache's callback
 * context (a worker), never on the coordinator's event loop. In the manner of vertx-redis-client's
 * {@code PreservesContext} tests.
 */
@ExtendWith(VertxExtension.class)
class PreservesContextTest {

    enum CallerKind { EVENT_LOOP, WORKER, DUPLICATED, PLAIN_THREAD }

    /** Where one callback ran, and what it was given. */
    private record Seen(String call, Context context, Thread thread, Object value, Throwable failure) {
    }

    /** Where calls are made from: a context, or a thread of its own. */
    private static final class Caller implements AutoCloseable {

        final CallerKind kind;
        final Context context;
        final ExecutorService thread;
        volatile Thread coordinatorThread;

        Caller(CallerKind kind, Vertx vertx) {
            this.kind = kind;
            ContextInternal eventLoop = ((VertxInternal) vertx).createEventLoopContext();
            this.context = switch (kind) {
                case EVENT_LOOP -> eventLoop;
                case WORKER -> ((VertxInternal) vertx).createWorkerContext();
                case DUPLICATED -> eventLoop.duplicate();
                case PLAIN_THREAD -> null;
            };
            this.thread = kind == CallerKind.PLAIN_THREAD
                    ? Executors.newSingleThreadExecutor(r -> new Thread(r, "engine-thread")) : null;
        }

        void run(Runnable call) {
            if (context != null) {
                context.runOnContext(v -> call.run());
            } else {
                thread.execute(call);
            }
        }

        /** Runs {@code call} here and waits for what its callback saw. */
        Seen seen(String name, java.util.function.Consumer<CompletableFuture<Seen>> call) {
            CompletableFuture<Seen> seen = new CompletableFuture<>();
            run(() -> call.accept(seen));
            try {
                return seen.get(10, TimeUnit.SECONDS);
            } catch (Exception e) {
                throw new AssertionError(name + " from " + kind + ": no answer: " + e, e);
            }
        }

        /** The answer's callback ran where this caller must be answered. */
        void answeredHere(Seen seen) {
            assertThat(seen.thread()).as(seen.call() + " from " + kind).isNotSameAs(coordinatorThread);
            if (context != null) {
                assertThat(seen.context()).as(seen.call() + " from " + kind).isSameAs(context);
            } else {
                assertThat(seen.context()).as(seen.call() + " from a plain thread").isNotNull();
                assertThat(seen.context().isWorkerContext()).as(seen.call() + " from a plain thread: on a worker").isTrue();
            }
        }

        /** Rx replays a cached outcome on the thread that subscribes: a plain thread may see it there too. */
        void answeredHereOrReplayed(Seen seen, Thread callerThread) {
            if (context == null && seen.thread() == callerThread) {
                assertThat(seen.thread()).isNotSameAs(coordinatorThread);
                return;
            }
            answeredHere(seen);
        }

        @Override
        public void close() {
            if (thread != null) {
                thread.shutdownNow();
            }
        }
    }

    private static KvCacheOptions options(String name) {
        return SimPool.options(name).setTp(1);
    }

    private static <T> Seen future(Caller caller, String name, Supplier<Future<T>> call) {
        Seen seen = caller.seen(name, done -> call.get().onComplete(ar -> done.complete(new Seen(name, Vertx.currentContext(),
                Thread.currentThread(), ar.succeeded() ? ar.result() : null, ar.failed() ? ar.cause() : null))));
        caller.answeredHere(seen);
        return seen;
    }

    private static <T> T succeeded(Caller caller, String name, Supplier<Future<T>> call) {
        Seen seen = future(caller, name, call);
        assertThat(seen.failure()).as(name).isNull();
        @SuppressWarnings("unchecked")
        T value = (T) seen.value();
        return value;
    }

    /** A method that answers at once: on the caller's own thread, with no callback. */
    private static <T> T direct(Caller caller, String name, Supplier<T> call) {
        Seen seen = caller.seen(name, done -> done.complete(new Seen(name, Vertx.currentContext(), Thread.currentThread(),
                call.get(), null)));
        assertThat(seen.context()).as(name).isSameAs(caller.context);
        @SuppressWarnings("unchecked")
        T value = (T) seen.value();
        return value;
    }

    @ParameterizedTest
    @EnumSource(CallerKind.class)
    void everyFutureMethodAnswersOnTheCallersContext(CallerKind kind, Vertx vertx) {
        String name = "ctx-" + kind.name().toLowerCase();
        try (Caller caller = new Caller(kind, vertx)) {
            KvCache cache = succeeded(caller, "deploy", () -> KvCache.deploy(vertx, options(name)));
            caller.coordinatorThread = ((LocalKvCache) cache).verticle().thread();
            assertThat(direct(caller, "options", cache::options).getInstance()).isEqualTo(name);
            Allocation a = succeeded(caller, "alloc", () -> cache.alloc(3));
            assertThat(a.size()).isEqualTo(3);
            assertThat(future(caller, "alloc(0)", () -> cache.alloc(0)).failure()).isInstanceOf(IllegalArgumentException.class);
            long fence = succeeded(caller, "fence", cache::fence);
            succeeded(caller, "free", () -> cache.free(a));
            succeeded(caller, "retired", () -> cache.retired(fence));
            assertThat(future(caller, "retired again", () -> cache.retired(fence)).failure()).isInstanceOf(IllegalArgumentException.class);
            assertThat(succeeded(caller, "availableBlocks", cache::availableBlocks)).isEqualTo(SimPool.PAGES * SimPool.BLOCKS_PER_PAGE);
            succeeded(caller, "setMemoryLimit(bytes, revision)", () -> cache.setMemoryLimit(SimPool.PAGE_ID_BYTES * 4, 1));
            succeeded(caller, "setMemoryLimit(bytes)", () -> cache.setMemoryLimit(SimPool.PAGE_ID_BYTES * 8));
            assertThat(succeeded(caller, "stats", cache::stats).ranks()).hasSize(1);
            succeeded(caller, "trim", cache::trim);
            succeeded(caller, "close", cache::close);
            assertThat(future(caller, "alloc after close", () -> cache.alloc(1)).failure()).isNotNull();
        }
    }

    private static <T> T single(Caller caller, Thread callerThread, String name, Supplier<Single<T>> call) {
        Seen seen = caller.seen(name, done -> call.get().subscribe(
                value -> done.complete(new Seen(name, Vertx.currentContext(), Thread.currentThread(), value, null)),
                failure -> done.complete(new Seen(name, Vertx.currentContext(), Thread.currentThread(), null, failure))));
        caller.answeredHereOrReplayed(seen, callerThread);
        assertThat(seen.failure()).as(name).isNull();
        @SuppressWarnings("unchecked")
        T value = (T) seen.value();
        return value;
    }

    private static void completable(Caller caller, Thread callerThread, String name, Supplier<Completable> call) {
        Seen seen = caller.seen(name, done -> call.get().subscribe(
                () -> done.complete(new Seen(name, Vertx.currentContext(), Thread.currentThread(), null, null)),
                failure -> done.complete(new Seen(name, Vertx.currentContext(), Thread.currentThread(), null, failure))));
        caller.answeredHereOrReplayed(seen, callerThread);
        assertThat(seen.failure()).as(name).isNull();
    }

    @ParameterizedTest
    @EnumSource(CallerKind.class)
    void everyRxMethodAnswersOnTheCallersContext(CallerKind kind, Vertx core) {
        io.vertx.rxjava3.core.Vertx vertx = io.vertx.rxjava3.core.Vertx.newInstance(core);
        String name = "rx-ctx-" + kind.name().toLowerCase();
        try (Caller caller = new Caller(kind, core)) {
            AtomicReference<Thread> thread = new AtomicReference<>();
            caller.seen("the caller's thread", done -> {
                thread.set(Thread.currentThread());
                done.complete(null);
            });
            Thread callerThread = thread.get();
            io.kvpager.rxjava3.cache.KvCache cache = single(caller, callerThread, "rxDeploy",
                    () -> io.kvpager.rxjava3.cache.KvCache.rxDeploy(vertx, options(name)));
            caller.coordinatorThread = ((LocalKvCache) cache.getDelegate()).verticle().thread();
            io.kvpager.rxjava3.cache.KvCache second = single(caller, callerThread, "deploy",
                    () -> io.kvpager.rxjava3.cache.KvCache.deploy(vertx, options(name + "-2")));
            completable(caller, callerThread, "close (second)", second::close);
            assertThat(direct(caller, "options", cache::options).getInstance()).isEqualTo(name);
            Allocation a = single(caller, callerThread, "rxAlloc", () -> cache.rxAlloc(2));
            Allocation b = single(caller, callerThread, "alloc", () -> cache.alloc(2));
            long fence = single(caller, callerThread, "rxFence", cache::rxFence);
            completable(caller, callerThread, "rxFree", () -> cache.rxFree(a));
            completable(caller, callerThread, "free", () -> cache.free(b));
            completable(caller, callerThread, "rxRetired", () -> cache.rxRetired(fence));
            long next = single(caller, callerThread, "fence", cache::fence);
            completable(caller, callerThread, "retired", () -> cache.retired(next));
            assertThat(single(caller, callerThread, "rxAvailableBlocks", cache::rxAvailableBlocks)).isPositive();
            assertThat(single(caller, callerThread, "availableBlocks", cache::availableBlocks)).isPositive();
            single(caller, callerThread, "rxSetMemoryLimit(bytes, revision)", () -> cache.rxSetMemoryLimit(SimPool.PAGE_ID_BYTES * 4, 1));
            single(caller, callerThread, "setMemoryLimit(bytes, revision)", () -> cache.setMemoryLimit(SimPool.PAGE_ID_BYTES * 4, 2));
            single(caller, callerThread, "rxSetMemoryLimit(bytes)", () -> cache.rxSetMemoryLimit(SimPool.PAGE_ID_BYTES * 8));
            single(caller, callerThread, "setMemoryLimit(bytes)", () -> cache.setMemoryLimit(SimPool.PAGE_ID_BYTES * 8));
            assertThat(single(caller, callerThread, "rxStats", cache::rxStats).ranks()).hasSize(1);
            assertThat(single(caller, callerThread, "stats", cache::stats).ranks()).hasSize(1);
            completable(caller, callerThread, "rxTrim", cache::rxTrim);
            completable(caller, callerThread, "trim", cache::trim);
            completable(caller, callerThread, "rxClose", cache::rxClose);
            completable(caller, callerThread, "close again", cache::close);
        }
    }
}
