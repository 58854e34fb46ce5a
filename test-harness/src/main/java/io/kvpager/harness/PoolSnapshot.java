package io.kvpager.harness;

import io.kvpager.protocol.StatsRequest;
import io.kvpager.Geometry;
import io.kvpager.cache.KvCache;
import io.kvpager.core.LedgerStats;
import io.kvpager.internal.CoordinatorView;
import io.kvpager.protocol.RankTarget;
import io.kvpager.sim.SimGpu;
import io.kvpager.sim.SimGpus;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.Vertx;
import io.vertx.core.json.JsonObject;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * What a pool's coordinator believes and what its ranks hold, taken while nothing moves: the
 * ledger's figures before and after the ranks were asked are the same, no map or unmap is in
 * flight, and no rank's thread is held by a hanging or delayed driver call.
 *
 * <p>{@link #disagreements()} compares them. For a rank in the pool, the device must hold
 * {@code mappedPages × handlesPerPageId} handles for the ledger's mapped pages, plus the idle
 * handles the worker's pool keeps ({@code pooledHandles}) and those whose release failed and
 * waits for a retry ({@code unreleasedHandles}), each of {@code handleBytes}: nothing else. A
 * quarantined page is one whose state on some rank the coordinator cannot know, so a rank may
 * hold anything from none to all of the quarantined pages (and parts of them, when its own
 * rollback failed); the counts are exact when nothing is quarantined. A rank the coordinator
 * counts as lost (its worker or its tensors went away) must hold none of the pool's pages until it
 * has rejoined.
 */
public record PoolSnapshot(Geometry geometry, int group, LedgerStats ledger, String brokenInvariant,
                           List<String> lostRanks, List<RankAccount> ranks) {

    private static final Duration ASK_BOUND = Duration.ofSeconds(10);

    public PoolSnapshot {
        lostRanks = List.copyOf(lostRanks);
        ranks = List.copyOf(ranks);
    }

    /** The coordinator's side of a snapshot. */
    private record Belief(LedgerStats ledger, String brokenInvariant, List<String> lost) {

        boolean sameAs(Belief other) {
            return ledger.mapCalls() == other.ledger.mapCalls() && ledger.unmapCalls() == other.ledger.unmapCalls()
                    && ledger.mappedPages() == other.ledger.mappedPages()
                    && ledger.quarantinedPages() == other.ledger.quarantinedPages()
                    && ledger.mappingPages() == 0 && ledger.unmappingPages() == 0
                    && other.ledger.mappingPages() == 0 && other.ledger.unmappingPages() == 0
                    && lost.equals(other.lost);
        }
    }

    /**
     * Takes a snapshot once the pool is at rest, trying every 10 ms.
     *
     * @param bound how long the pool may take to come to rest
     * @return the snapshot, or a failure saying what kept moving when {@code bound} passed
     */
    public static Future<PoolSnapshot> atRest(Vertx vertx, KvCache cache, SimRanks ranks, Duration bound) {
        Promise<PoolSnapshot> promise = Promise.promise();
        attempt(vertx, CoordinatorView.of(cache), cache, ranks, System.nanoTime() + bound.toNanos(), promise);
        return promise.future();
    }

    private static void attempt(Vertx vertx, CoordinatorView view, KvCache cache, SimRanks ranks, long deadline,
                                Promise<PoolSnapshot> promise) {
        Future<PoolSnapshot> once = ranks.quiet() ? take(vertx, view, cache, ranks)
                : Future.failedFuture(new IllegalStateException("a driver call still hangs or waits out a delay"));
        once.onComplete(ar -> {
            if (ar.succeeded()) {
                promise.complete(ar.result());
            } else if (System.nanoTime() - deadline > 0) {
                promise.fail(new IllegalStateException("the pool did not come to rest: " + ar.cause().getMessage(), ar.cause()));
            } else {
                vertx.setTimer(10, t -> attempt(vertx, view, cache, ranks, deadline, promise));
            }
        });
    }

    private static Future<PoolSnapshot> take(Vertx vertx, CoordinatorView view, KvCache cache, SimRanks ranks) {
        int group = cache.options().getGroup();
        Geometry geometry = cache.options().geometry();
        List<String> devicesBefore = devices(ranks);
        return belief(view).compose(before -> {
            List<Future<JsonObject>> asked = new ArrayList<>();
            for (int r = 0; r < ranks.tp(); r++) {
                StatsRequest stats = new StatsRequest();
                asked.add(vertx.eventBus().<JsonObject>request(ranks.address(r), stats.toJson(),
                        stats.action().delivery().setSendTimeout(ASK_BOUND.toMillis()))
                        .map(m -> m.body()));
            }
            return Future.join(asked).transform(joined -> belief(view)).compose(after -> {
                if (!before.sameAs(after)) {
                    return Future.failedFuture(new IllegalStateException("the ledger moved while the ranks were asked: "
                            + before.ledger() + " then " + after.ledger()));
                }
                // Background work that leaves the ledger alone (the quarantine sweep releasing pages
                // on the ranks) may still move the devices: then the ranks' answers and the devices'
                // counts are not of one moment.
                List<String> devicesAfter = devices(ranks);
                if (!devicesBefore.equals(devicesAfter)) {
                    return Future.failedFuture(new IllegalStateException("the devices moved while the ranks were asked: "
                            + devicesBefore + " then " + devicesAfter));
                }
                List<RankAccount> accounts = new ArrayList<>(ranks.tp());
                for (int r = 0; r < ranks.tp(); r++) {
                    Future<JsonObject> answer = asked.get(r);
                    Optional<SimGpu> gpu = SimGpus.find(ranks.instance(), r);
                    accounts.add(new RankAccount(ranks.rank(r), answer.succeeded() ? answer.result() : null,
                            answer.succeeded() ? null : answer.cause().getMessage(),
                            gpu.map(SimGpu::hasOpenDevices).orElse(false), gpu.map(SimGpu::handlesAlive).orElse(0L),
                            gpu.map(SimGpu::bytesInUse).orElse(0L)));
                }
                return Future.succeededFuture(new PoolSnapshot(geometry, group, after.ledger(), after.brokenInvariant(),
                        after.lost(), accounts));
            });
        });
    }

    /** Each rank's simulated GPU as handles and bytes held, to tell whether it moved. */
    private static List<String> devices(SimRanks ranks) {
        List<String> held = new ArrayList<>(ranks.tp());
        for (int r = 0; r < ranks.tp(); r++) {
            held.add(SimGpus.find(ranks.instance(), r).map(g -> g.handlesAlive() + "/" + g.bytesInUse()).orElse("none"));
        }
        return held;
    }

    private static Future<Belief> belief(CoordinatorView view) {
        return view.call(c -> {
            String broken = null;
            try {
                c.ledger().checkInvariants();
            } catch (IllegalStateException e) {
                broken = e.getMessage();
            }
            List<String> lost = new ArrayList<>();
            for (RankTarget rank : c.lostRanks()) {
                lost.add(rank.name());
            }
            return new Belief(c.ledger().stats(), broken, lost);
        });
    }

    /** Everything that does not add up, in words; empty when the devices hold what the ledger believes. */
    public List<String> disagreements() {
        List<String> out = new ArrayList<>();
        if (brokenInvariant != null) {
            out.add("ledger invariant broken: " + brokenInvariant);
        }
        int hpp = geometry.handlesPerPageId();
        long handleBytes = geometry.handleBytes();
        int mapped = ledger.mappedPages();
        int quarantined = ledger.quarantinedPages();
        for (RankAccount r : ranks) {
            String who = r.rank() + ": ";
            if (!r.up()) {
                if (r.deviceOpen() || r.deviceHandles() != 0 || r.deviceBytes() != 0) {
                    out.add(who + "its worker does not answer (" + r.down() + ") but its GPU holds " + r.deviceHandles()
                            + " handles, " + r.deviceBytes() + " bytes" + (r.deviceOpen() ? " with a device open" : ""));
                }
                if (!lostRanks.contains(r.rank()) && mapped > 0) {
                    out.add(who + "its worker does not answer (" + r.down() + ") yet the coordinator counts it in the pool");
                }
                continue;
            }
            long mappedThere = r.groupFigure(group, "mappedPages");
            long groupHandles = r.groupFigure(group, "handles");
            long unreleased = r.groupFigure(group, "unreleasedHandles");
            long pooled = r.workerFigure("pooledHandles");
            if (r.deviceHandles() != groupHandles + pooled || r.workerFigure("handlesAlive") != r.deviceHandles()) {
                out.add(who + "the device holds " + r.deviceHandles() + " handles but the worker counts " + groupHandles
                        + " for the group and " + pooled + " idle in its pool (handlesAlive " + r.workerFigure("handlesAlive") + ")");
            }
            if (r.deviceBytes() != r.deviceHandles() * handleBytes) {
                out.add(who + "the device holds " + r.deviceBytes() + " bytes for " + r.deviceHandles() + " handles of "
                        + handleBytes + " bytes");
            }
            if (r.workerFigure("pooledBytes") != pooled * handleBytes) {
                out.add(who + "the worker's pool counts " + r.workerFigure("pooledBytes") + " bytes for " + pooled + " handles");
            }
            if (lostRanks.contains(r.rank())) {
                if (mappedThere != 0) {
                    out.add(who + "the coordinator counts it lost, yet it maps " + mappedThere + " pages of the pool");
                }
                continue;
            }
            // handles the group holds beyond its whole mapped pages and the ones waiting for release: parts of pages
            long partly = groupHandles - unreleased - mappedThere * hpp;
            String believed = mapped + " mapped pages × " + hpp + " + " + pooled + " pooled + " + unreleased
                    + " unreleased = " + (mapped * (long) hpp + pooled + unreleased) + " handles";
            if (quarantined == 0) {
                if (mappedThere != mapped || partly != 0) {
                    out.add(who + "the ledger believes " + believed + ", the device holds " + r.deviceHandles() + " ("
                            + mappedThere + " pages mapped there, " + partly + " handles of partly mapped pages)");
                }
            } else if (mappedThere < mapped || mappedThere > mapped + quarantined || partly < 0
                    || mappedThere * hpp + partly > (mapped + (long) quarantined) * hpp) {
                out.add(who + "the ledger believes " + believed + " plus up to " + quarantined + " quarantined pages, the device"
                        + " holds " + r.deviceHandles() + " (" + mappedThere + " pages mapped there, " + partly
                        + " handles of partly mapped pages)");
            }
        }
        return out;
    }

    /** One line: the ledger's pages and each rank's handles. */
    public String summary() {
        StringBuilder s = new StringBuilder("ledger: ").append(ledger.mappedPages()).append(" mapped (")
                .append(ledger.inUsePages()).append(" in use, ").append(ledger.reservePages()).append(" reserve, ")
                .append(ledger.reclaimedPages()).append(" reclaimed), ").append(ledger.quarantinedPages()).append(" quarantined");
        if (!lostRanks.isEmpty()) {
            s.append(", lost ").append(lostRanks);
        }
        for (RankAccount r : ranks) {
            s.append("; ").append(r.rank()).append(": ").append(r.up() ? r.deviceHandles() + " handles" : "down");
        }
        return s.toString();
    }
}
