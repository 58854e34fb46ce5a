package io.kvpager.impl.coordinator;

import io.kvpager.protocol.PagesRequest;
import io.kvpager.protocol.CreateTensorsRequest;
import io.kvpager.FailureCode;
import io.kvpager.cache.KvPagerException;
import io.kvpager.cache.RankFailure;
import io.kvpager.protocol.RankTarget;
import io.kvpager.protocol.RequestFields;
import io.kvpager.protocol.WorkerAction;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.Vertx;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import java.util.function.Supplier;

/**
 * Ranks that lost the pool's tensors, and how they come back. A rank is lost when it answers a map
 * or unmap with no worker at its address ({@code NO_RANK}) or with no tensors for the group (404),
 * or when the cluster removes its node: its worker stopped, died, or was restarted. Before the next map the coordinator brings every lost rank
 * back: {@code create-tensors}, {@code tensors-created}, then a map of every page the pool holds
 * mapped, so the rank matches the others again. While a rank cannot be brought back, maps fail
 * with its error, and it is tried again on the next one.
 *
 * <p>A rejoined rank's pages hold fresh memory: the KV contents it had are gone, which is logged.
 * Runs on the coordinator's context; one rejoin at a time, concurrent maps wait for it.
 *
 * <p>The rejoin also counts the map and unmap fan-outs in flight ({@link #track}, called by the
 * {@link FanOutMapper} for each): before it reads which pages the rejoining rank must map it waits
 * until none is, so that a page whose unmap fails (and is undone) after that read cannot stay
 * unmapped on the rejoining rank alone. The mapper asks the rejoin; the rejoin never asks the mapper.
 */
public final class RankRejoin {

    private static final Logger log = LoggerFactory.getLogger(RankRejoin.class);

    private final Vertx vertx;
    private final RankFanOut fanOut;
    private final CreateTensorsRequest tensors;
    private final long deadlineMs;
    private final long pollMs;
    private final Supplier<int[]> mappedPages;
    private final Set<RankTarget> lost = new LinkedHashSet<>();
    private Future<Void> inFlight;
    private long rejoined;
    /** Map and unmap fan-outs in flight, and the promise of a rejoin waiting for them to settle. */
    private int fanOuts;
    private Promise<Void> settled;

    /**
     * @param mappedPages the pages mapped on the other ranks, read once no fan-out {@link #track tracked}
     *     here is in flight
     */
    public RankRejoin(Vertx vertx, RankFanOut fanOut, CreateTensorsRequest tensors, long deadlineMs, long pollMs,
                      Supplier<int[]> mappedPages) {
        this.vertx = vertx;
        this.fanOut = fanOut;
        this.tensors = tensors;
        this.deadlineMs = deadlineMs;
        this.pollMs = pollMs;
        this.mappedPages = mappedPages;
    }

    /** Whether no rank is lost: a map or unmap then goes out at once, with no rejoin before it. */
    public boolean allBack() {
        return lost.isEmpty();
    }

    /** Counts {@code fanOut}, a map or unmap on the ranks, as in flight until it completes. */
    public <T> Future<T> track(Future<T> fanOut) {
        fanOuts++;
        return fanOut.andThen(done -> {
            if (--fanOuts == 0 && settled != null) {
                Promise<Void> waiting = settled;
                settled = null;
                waiting.complete();
            }
        });
    }

    /** Completes once no tracked fan-out is in flight (at once when none is). */
    private Future<Void> settled() {
        if (fanOuts == 0) {
            return Future.succeededFuture();
        }
        if (settled == null) {
            settled = Promise.promise();
        }
        return settled.future();
    }

    /** Notes the ranks among {@code replies} that have lost the pool's tensors. */
    public void noteLost(List<RankReply> replies) {
        for (RankReply reply : replies) {
            // a stopping worker destroys every group's tensors on its way out
            if (reply.code() == FailureCode.NO_RANK || reply.code() == FailureCode.NO_TENSORS || reply.code() == FailureCode.STOPPING) {
                lost.add(reply.rank());
            }
        }
    }

    /** Notes ranks whose node left the cluster: their tensors went with it. */
    public void noteDeparted(List<RankTarget> ranks) {
        lost.addAll(ranks);
    }

    /** The ranks lost now, in rank order. */
    public List<RankTarget> lost() {
        return List.copyOf(lost);
    }

    /** How many times a rank has been brought back. */
    long rejoined() {
        return rejoined;
    }

    /**
     * Brings every lost rank back; completes at once when none is lost, and fails with a
     * {@link KvPagerException} naming the ranks that could not come back.
     */
    public Future<Void> rejoin() {
        if (lost.isEmpty()) {
            return Future.succeededFuture();
        }
        if (inFlight != null) {
            return inFlight;
        }
        List<RankTarget> ranks = List.copyOf(lost);
        Promise<Void> promise = Promise.promise();
        inFlight = promise.future();
        new TensorStart(vertx, fanOut, ranks, tensors, deadlineMs, pollMs, false).run()
                .compose(created -> settled())
                .compose(quiet -> {
                    int[] pages = mappedPages.get();
                    if (pages.length == 0) {
                        return Future.succeededFuture(pages);
                    }
                    PagesRequest map = new PagesRequest(WorkerAction.MAP, fanOut.nextRequestId(), fanOut.pool().group(),
                            fanOut.owner(), pages);
                    return fanOut.send(ranks, map, fanOut.sendTimeoutMs()).compose(replies -> {
                        List<RankFailure> failures = RankFanOut.failures(replies);
                        return failures.isEmpty() ? Future.succeededFuture(pages)
                                : Future.failedFuture(KvPagerException.ofRanks("re-mapping the " + pages.length
                                        + " mapped pages of group " + fanOut.pool().group() + " on a rejoining rank",
                                        ranks.size(), failures));
                    });
                })
                .onComplete(ar -> {
                    inFlight = null;
                    if (ar.succeeded()) {
                        lost.removeAll(ranks);
                        rejoined += ranks.size();
                        log.warn("{} rejoined pool {} group {}: tensors re-created, {} pages re-mapped; their KV contents "
                                + "on that rank are lost", names(ranks), fanOut.pool().instance(), fanOut.pool().group(),
                                ar.result().length);
                        promise.complete();
                    } else {
                        Throwable cause = ar.cause();
                        KvPagerException failure = cause instanceof KvPagerException k ? k
                                : new KvPagerException(FailureCode.DRIVER_ERROR, cause.toString(), List.of(), cause);
                        promise.fail(failure.withNote(names(ranks) + " lost the tensors of group " + fanOut.pool().group()
                                + " and could not rejoin"));
                    }
                });
        return promise.future();
    }

    private static String names(List<RankTarget> ranks) {
        List<String> names = new ArrayList<>(ranks.size());
        for (RankTarget r : ranks) {
            names.add(r.name());
        }
        return String.join(", ", names);
    }
}
