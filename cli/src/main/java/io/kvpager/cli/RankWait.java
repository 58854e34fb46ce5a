package io.kvpager.cli;

import io.kvpager.protocol.StatsRequest;
import io.kvpager.cache.KvCacheOptions;
import io.kvpager.protocol.WorkerAction;
import io.kvpager.worker.RankWorker;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.eventbus.DeliveryOptions;
import io.vertx.core.eventbus.ReplyException;
import io.vertx.core.eventbus.ReplyFailure;
import java.io.PrintWriter;
import java.util.ArrayList;
import java.util.List;

/**
 * While a coordinator waits for its ranks' tensors, says every few seconds which ranks have no
 * worker yet, so that an operator is not left looking at a silent process for the whole
 * deadline. A rank counts as present once anything answers at its address (a worker that is
 * still starting answers too); only "no handler" marks it missing.
 */
final class RankWait implements AutoCloseable {

    static final long EVERY_MS = 3_000;
    private static final long PROBE_TIMEOUT_MS = 1_000;

    private final Vertx vertx;
    private final KvCacheOptions options;
    private final PrintWriter err;
    private final long timer;

    RankWait(Vertx vertx, KvCacheOptions options, PrintWriter err) {
        this.vertx = vertx;
        this.options = options;
        this.err = err;
        this.timer = vertx.setPeriodic(EVERY_MS, id -> report());
    }

    private void report() {
        List<String> ranks = new ArrayList<>();
        List<Future<Boolean>> present = new ArrayList<>();
        for (int pp : options.getStages()) {
            for (int tp = 0; tp < options.getTp(); tp++) {
                ranks.add("pp" + pp + "/tp" + tp);
                present.add(answers(RankWorker.address(options.getInstance(), pp, tp)));
            }
        }
        Future.join(present).onComplete(x -> {
            List<String> missing = new ArrayList<>();
            for (int i = 0; i < ranks.size(); i++) {
                if (!present.get(i).result()) {
                    missing.add(ranks.get(i));
                }
            }
            synchronized (err) {
                err.println("kvpager coordinator: waiting for the tensors of " + options.getInstance() + " (up to "
                        + options.getTensorsDeadlineMs() / 1000 + " s); " + (missing.isEmpty()
                                ? "every rank has a worker, which is creating its tensors"
                                : "no worker yet for " + String.join(", ", missing) + ": start one per rank with kvpager worker --instance "
                                        + options.getInstance() + " --tp R [--pp P] and this --cluster-name"));
                err.flush();
            }
        });
    }

    private Future<Boolean> answers(String address) {
        StatsRequest stats = new StatsRequest();
        DeliveryOptions probe = stats.action().delivery().setSendTimeout(PROBE_TIMEOUT_MS);
        return vertx.eventBus().request(address, stats.toJson(), probe)
                .map(true)
                .otherwise(e -> !(e instanceof ReplyException r && r.failureType() == ReplyFailure.NO_HANDLERS));
    }

    @Override
    public void close() {
        vertx.cancelTimer(timer);
    }
}
