package io.kvpager.impl.coordinator;

import io.kvpager.protocol.PagesReply;
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
import java.util.Arrays;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import java.util.function.Supplier;

/**
 * Ranks that lost the pool's tensors, and how they come back. A rank is lost when it answers a map
 * or unmap with no worker at its address ({@code NO_RANK}) or with no tensors for the group (404),
 * or when the cluster removes its node: its worker stopped, died, or was restarted. Before the next map the coordinator brings every lost rank
 * back: {@code create-tensors}, {@code tensors-created}, {@code release-pages} of every page of the
 * group, then a map of every page the pool holds mapped, so the rank matches the others again. The
 * release is there for a rank that only looked lost: paused or cut off while the cluster counted it
 * gone, it kept its tensors and pages, and the pool may have unmapped or mapped pages since; without
 * it the map would meet pages already mapped, and fail on every try. The release follows the wait
 * for fan-outs in flight (below), which may still reach the rank. While a rank cannot be brought
 * back, maps fail with its error, and it is tried again on the next one.
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
        int[] released = new int[1];
        new TensorStart(vertx, fanOut, ranks, tensors, deadlineMs, pollMs, false).run()
                .compose(created -> settled())
                .compose(quiet -> releaseAll(ranks))
                .compose(held -> {
                    released[0] = held;
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
                        log.warn("{} rejoined pool {} group {}: tensors re-created, {} pages they still held released, "
                                + "{} pages re-mapped; their KV contents on that rank are lost", names(ranks),
                                fanOut.pool().instance(), fanOut.pool().group(), released[0], ar.result().length);
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

    /**
     * Releases every page of the group that the rejoining ranks still hold, so that the map after it
     * finds them empty: a rank marked lost may have kept its tensors and pages (paused, or cut off,
     * while the cluster counted it gone), and those pages need not be the ones the pool holds now.
     * Completes with the number of pages that held memory; fails naming the ranks that did not
     * confirm every page clean.
     */
    private Future<Integer> releaseAll(List<RankTarget> ranks) {
        int[] every = new int[tensors.geometry().pages()];
        Arrays.setAll(every, i -> i);
        PagesRequest release = new PagesRequest(WorkerAction.RELEASE_PAGES, fanOut.nextRequestId(), fanOut.pool().group(),
                fanOut.owner(), every);
        return fanOut.send(ranks, release, fanOut.sendTimeoutMs()).compose(replies -> {
            List<RankFailure> failures = new ArrayList<>(RankFanOut.failures(replies));
            int held = 0;
            for (RankReply reply : replies) {
                if (!reply.succeeded()) {
                    continue;
                }
                if (FanOutMapper.confirms(reply.body(), WorkerAction.RELEASE_PAGES, every)) {
                    held += PagesReply.fromJson(WorkerAction.RELEASE_PAGES, reply.body()).released().length;
                } else {
                    failures.add(new RankFailure(reply.rank().name(), FailureCode.DRIVER_ERROR, reply.rank().name()
                            + " answered release-pages without confirming all " + every.length + " pages of group "
                            + fanOut.pool().group() + " clean"));
                }
            }
            return failures.isEmpty() ? Future.succeededFuture(held)
                    : Future.failedFuture(KvPagerException.ofRanks("releasing what a rejoining rank still held of group "
                            + fanOut.pool().group(), ranks.size(), failures));
        });
    }

    private static String names(List<RankTarget> ranks) {
        List<String> names = new ArrayList<>(ranks.size());
        for (RankTarget r : ranks) {
            names.add(r.name());
        }
        return String.join(", ", names);
    }
}
