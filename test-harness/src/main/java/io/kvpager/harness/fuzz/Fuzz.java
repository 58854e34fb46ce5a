package io.kvpager.harness.fuzz;

import io.kvpager.protocol.WorkerProtocol;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.Vertx;
import io.vertx.core.eventbus.DeliveryOptions;
import io.vertx.core.eventbus.Message;
import io.vertx.core.eventbus.ReplyException;
import io.vertx.core.eventbus.ReplyFailure;

import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * Sends {@link HostileMessages} to a pool, {@code concurrency} at a time, and checks every answer:
 * a refusal with the expected code (400, 404 or 409), never a success, a timeout, a missing
 * receiver or any other code.
 */
public final class Fuzz {

    private static final int KEPT = 20;

    private final Vertx vertx;
    private final HostileMessages messages;
    private final long seed;
    private final int concurrency;
    private final Duration timeout;
    private final Map<String, Long> byCode = new HashMap<>();
    private final Map<String, Long> byTarget = new HashMap<>();
    private final List<String> wrong = new ArrayList<>();
    private long wrongCount;
    private long sent;

    /**
     * @param timeout how long one answer may take: far longer than any refusal needs, so that a
     *     timeout means a message was never answered
     */
    public Fuzz(Vertx vertx, PoolFacts facts, long seed, int concurrency, Duration timeout) {
        this.vertx = vertx;
        this.messages = new HostileMessages(facts, seed);
        this.seed = seed;
        this.concurrency = concurrency;
        this.timeout = timeout;
    }

    /** Sends {@code count} messages; completes with the report once every one has been answered. */
    public Future<FuzzReport> run(long count) {
        long started = System.nanoTime();
        Promise<FuzzReport> done = Promise.promise();
        vertx.runOnContext(v -> nextRound(count, started, done));
        return done.future();
    }

    private void nextRound(long count, long started, Promise<FuzzReport> done) {
        if (sent == count) {
            done.complete(new FuzzReport(seed, sent, byCode, byTarget, wrong, wrongCount, (System.nanoTime() - started) / 1e9));
            return;
        }
        int n = (int) Math.min(concurrency, count - sent);
        List<Future<Void>> round = new ArrayList<>(n);
        for (int i = 0; i < n; i++) {
            round.add(send(messages.next()));
        }
        sent += n;
        Future.join(round).onComplete(ar -> nextRound(count, started, done));
    }

    private Future<Void> send(HostileMessage m) {
        DeliveryOptions delivery = new DeliveryOptions().setSendTimeout(timeout.toMillis());
        if (m.action() != null) {
            delivery.addHeader(WorkerProtocol.ACTION_HEADER, m.action());
        }
        byTarget.merge(m.target().startsWith("pp") ? "workers" : "coordinator", 1L, Long::sum);
        Future<Message<Object>> answer;
        try {
            answer = vertx.eventBus().request(m.address(), m.body(), delivery);
        } catch (RuntimeException e) {
            answer = Future.failedFuture(e);
        }
        return answer.transform(ar -> {
            String got;
            boolean right;
            if (ar.succeeded()) {
                got = "success";
                right = false;
            } else if (ar.cause() instanceof ReplyException r && r.failureType() == ReplyFailure.RECIPIENT_FAILURE) {
                got = String.valueOf(r.failureCode());
                right = m.expected() == HostileMessage.ANY_REFUSAL
                        ? r.failureCode() == 400 || r.failureCode() == 404 || r.failureCode() == 409
                        : r.failureCode() == m.expected();
            } else if (ar.cause() instanceof ReplyException r) {
                got = r.failureType().name().toLowerCase(java.util.Locale.ROOT);
                right = false;
            } else {
                got = ar.cause().getClass().getSimpleName();
                right = false;
            }
            byCode.merge(got, 1L, Long::sum);
            if (!right) {
                wrongCount++;
                if (wrong.size() < KEPT) {
                    wrong.add(m.describe() + " -> expected " + (m.expected() == HostileMessage.ANY_REFUSAL ? "400/404/409"
                            : m.expected()) + ", got " + got + ": " + (ar.succeeded() ? ar.result().body()
                            : ar.cause().getMessage()));
                }
            }
            return Future.<Void>succeededFuture();
        });
    }
}
