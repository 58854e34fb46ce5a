package io.kvpager.impl.coordinator;

import io.kvpager.protocol.CreateTensorsRequest;
import io.kvpager.protocol.TensorsCreatedRequest;
import io.kvpager.protocol.RankTarget;
import io.kvpager.FailureCode;
import io.kvpager.cache.KvPagerException;
import io.kvpager.cache.RankFailure;
import io.kvpager.protocol.CreateTensorsReply;
import io.kvpager.protocol.TensorsCreatedReply;
import io.kvpager.protocol.WorkerAction;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.Vertx;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Brings a pool's tensors up on its ranks: {@code create-tensors} on each, then
 * {@code tensors-created} polled on a timer until every rank says yes or the wall-clock deadline
 * passes. Nothing blocks a thread while waiting.
 *
 * <p>A patient start (the cache's first) asks a rank that cannot be reached, or fails, again on
 * the next round: a worker may still be starting. A 400 or 409 to {@code create-tensors} is final
 * (a bad geometry, or another geometry already there) and fails the start at once; an impatient
 * start (a rank rejoining on the allocation path) fails at the first error. Every error seen is
 * kept: a start that times out ends its message with {@code "; last error: <the last one>"}, a
 * rank's own error, not the timeout of a last round that the deadline cut short.
 * Runs on the coordinator's context.
 */
public final class TensorStart {

    private static final Logger log = LoggerFactory.getLogger(TensorStart.class);

    private enum State { TO_CREATE, CREATED, READY }

    private final Vertx vertx;
    private final RankFanOut fanOut;
    private final CreateTensorsRequest tensors;
    private final long deadlineMs;
    private final long pollMs;
    private final boolean patient;
    private final Map<RankTarget, State> states = new LinkedHashMap<>();
    private final Map<RankTarget, RankFailure> lastFailures = new LinkedHashMap<>();
    private final Map<RankTarget, CreateTensorsReply> answers = new LinkedHashMap<>();
    private final Promise<Void> done = Promise.promise();
    private RankFailure lastError;
    private long startNanos;
    private long timer = -1;
    private boolean cancelled;

    /**
     * @param ranks the ranks to bring up
     * @param tensors the pool's {@code create-tensors} request
     * @param patient whether failures other than 400 and 409 are retried until the deadline
     */
    public TensorStart(Vertx vertx, RankFanOut fanOut, List<RankTarget> ranks, CreateTensorsRequest tensors, long deadlineMs,
                       long pollMs, boolean patient) {
        this.vertx = vertx;
        this.fanOut = fanOut;
        this.tensors = tensors;
        this.deadlineMs = deadlineMs;
        this.pollMs = pollMs;
        this.patient = patient;
        for (RankTarget rank : ranks) {
            states.put(rank, State.TO_CREATE);
        }
    }

    /** Starts the first round; the future completes when every rank has its tensors. */
    public Future<Void> run() {
        startNanos = System.nanoTime();
        round();
        return done.future();
    }

    /**
     * Each rank's answer to {@code create-tensors}, in rank order: the worker reports there which
     * GPU it runs on ({@code gpu}, {@code gpuBytes}) and the memory the group may hold besides its
     * pages ({@code standingBytes}).
     */
    public Map<RankTarget, CreateTensorsReply> created() {
        return java.util.Collections.unmodifiableMap(answers);
    }

    /** Stops polling; a start still running fails with a {@link FailureCode#STOPPING} failure. */
    public void cancel() {
        cancelled = true;
        if (timer >= 0) {
            vertx.cancelTimer(timer);
            timer = -1;
        }
        done.tryFail(new KvPagerException(FailureCode.STOPPING, "the cache closed while waiting for the tensors of group "
                + fanOut.pool().group()));
    }

    private void round() {
        timer = -1;
        if (cancelled) {
            return;
        }
        long left = remainingMs();
        if (left <= 0) {
            timedOut();
            return;
        }
        // a hung rank must not hold a round past the deadline
        long timeout = Math.max(1, Math.min(fanOut.sendTimeoutMs(), left));
        boolean cutShort = timeout < fanOut.sendTimeoutMs();
        List<RankTarget> toCreate = ranksIn(State.TO_CREATE);
        Future<List<RankReply>> created = toCreate.isEmpty() ? Future.succeededFuture(List.of())
                : fanOut.send(toCreate, tensors, timeout);
        created.compose(replies -> {
            List<RankFailure> fatal = new ArrayList<>();
            for (RankReply sent : replies) {
                RankReply reply = read(sent, WorkerAction.CREATE_TENSORS);
                if (reply.succeeded()) {
                    CreateTensorsReply answer = CreateTensorsReply.fromJson(reply.body());
                    states.put(reply.rank(), State.CREATED);
                    answers.put(reply.rank(), answer);
                    logReclaimed(reply.rank(), answer);
                } else if (!patient || reply.code() == FailureCode.BAD_REQUEST || reply.code() == FailureCode.CONFLICT) {
                    fatal.add(reply.failure());
                } else {
                    remember(reply, cutShort);
                }
            }
            if (!fatal.isEmpty()) {
                done.tryFail(KvPagerException.ofRanks("create-tensors for group " + fanOut.pool().group(),
                        states.size(), fatal));
                return Future.succeededFuture();
            }
            List<RankTarget> toAsk = ranksIn(State.CREATED);
            return toAsk.isEmpty() ? Future.succeededFuture()
                    : fanOut.send(toAsk, new TensorsCreatedRequest(fanOut.pool().group(), fanOut.owner()), timeout).map(answers -> {
                        List<RankFailure> failed = new ArrayList<>();
                        for (RankReply sent : answers) {
                            RankReply answer = read(sent, WorkerAction.TENSORS_CREATED);
                            if (!answer.succeeded()) {
                                remember(answer, cutShort);
                                failed.add(answer.failure());
                            } else if (TensorsCreatedReply.fromJson(answer.body()).created()) {
                                states.put(answer.rank(), State.READY);
                            }
                        }
                        if (!patient && !failed.isEmpty()) {
                            done.tryFail(KvPagerException.ofRanks("tensors-created for group " + fanOut.pool().group(),
                                    states.size(), failed));
                        }
                        return null;
                    });
        }).onComplete(ar -> {
            if (done.future().isComplete() || cancelled) {
                return;
            }
            if (ranksIn(State.READY).size() == states.size()) {
                done.tryComplete();
            } else if (remainingMs() <= 0) {
                timedOut();
            } else {
                timer = vertx.setTimer(Math.min(pollMs, Math.max(1, remainingMs())), id -> round());
            }
        });
    }

    /**
     * A reply whose body is not the action's answer (a field missing or mistyped) is that rank's
     * failure, naming what was wrong: the rank is not ready, and is asked again if the start is patient.
     */
    private static RankReply read(RankReply reply, WorkerAction action) {
        if (!reply.succeeded()) {
            return reply;
        }
        try {
            if (action == WorkerAction.CREATE_TENSORS) {
                CreateTensorsReply.fromJson(reply.body());
            } else {
                TensorsCreatedReply.fromJson(reply.body());
            }
            return reply;
        } catch (IllegalArgumentException e) {
            return RankReply.failed(reply.rank(), FailureCode.DRIVER_ERROR, reply.rank().name() + " answered "
                    + action.wireName() + " with " + reply.body().encode() + ": " + e.getMessage());
        }
    }

    /** A rank that gave this owner tensors another owner had left says what it released first: the start is clean. */
    private void logReclaimed(RankTarget rank, CreateTensorsReply answer) {
        if (answer.reclaimed() != null) {
            CreateTensorsReply.Reclaimed reclaimed = answer.reclaimed();
            log.warn("cache {} group {}: {} reclaimed the tensors that owner {} left: {} pages, {} bytes released; {} starts clean",
                    fanOut.pool().instance(), fanOut.pool().group(), rank.name(), reclaimed.owner(),
                    reclaimed.pages(), reclaimed.bytes(), fanOut.owner());
        }
    }

    /**
     * Keeps {@code reply}'s failure as its rank's and the start's last error; but a timeout of a
     * round the deadline {@code cutShort} (the start ran out of time, not the rank) does not hide
     * the error that rank gave before it.
     */
    private void remember(RankReply reply, boolean cutShort) {
        if (cutShort && reply.code() == FailureCode.TIMEOUT && lastFailures.containsKey(reply.rank())) {
            return;
        }
        lastError = reply.failure();
        lastFailures.put(reply.rank(), reply.failure());
    }

    private void timedOut() {
        List<RankTarget> waiting = new ArrayList<>();
        List<RankFailure> failures = new ArrayList<>();
        for (Map.Entry<RankTarget, State> e : states.entrySet()) {
            if (e.getValue() != State.READY) {
                waiting.add(e.getKey());
                RankFailure seen = lastFailures.get(e.getKey());
                failures.add(new RankFailure(e.getKey().name(), FailureCode.TIMEOUT, seen != null ? seen.message()
                        : e.getValue() == State.TO_CREATE ? "tensors not created" : "tensors-created still false"));
            }
        }
        String message = "tensors of group " + fanOut.pool().group() + " not ready on " + names(waiting) + " after "
                + deadlineMs + " ms (tensorsDeadlineMs); last error: "
                + (lastError == null ? "none, the ranks answered created=false" : lastError.toString());
        done.tryFail(new KvPagerException(FailureCode.TIMEOUT, message, failures, null));
    }

    private List<RankTarget> ranksIn(State state) {
        List<RankTarget> out = new ArrayList<>();
        for (Map.Entry<RankTarget, State> e : states.entrySet()) {
            if (e.getValue() == state) {
                out.add(e.getKey());
            }
        }
        return out;
    }

    private long remainingMs() {
        return deadlineMs - (System.nanoTime() - startNanos) / 1_000_000;
    }

    private static String names(List<RankTarget> ranks) {
        List<String> names = new ArrayList<>(ranks.size());
        for (RankTarget r : ranks) {
            names.add(r.name());
        }
        return String.join(", ", names);
    }
}
