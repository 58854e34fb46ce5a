package io.kvpager.cluster;

import io.kvpager.cluster.process.CacheProcesses;
import io.kvpager.cluster.process.SpawnedNode;
import io.kvpager.cluster.process.TestClusters;
import io.kvpager.impl.coordinator.Coordinator;
import io.kvpager.protocol.Owner;
import io.vertx.core.json.JsonObject;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.TimeUnit;

import static io.kvpager.cluster.process.TestClusters.await;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * A TP=2 cache whose workers and coordinator run in processes of their own, and a coordinator
 * paused (SIGSTOP) past the cluster's heartbeat timeout, then resumed (SIGCONT), as a long GC
 * pause or a frozen VM would: the others count its node gone and the workers give its pages back;
 * resumed, it finds itself displaced, merges back into the one cluster within seconds and serves
 * again as a new owner, with ledger, workers and devices agreeing, every GPU's budget record
 * counting at least what the pools hold, and the owner before it refused by the workers (409).
 * A worker paused the same way is counted down (allocations miss {@code RANK_DOWN} naming it) and,
 * resumed, rejoins: the coordinator maps the pool's pages on it again and serves.
 */
@Timeout(value = 240, unit = TimeUnit.SECONDS)
class PauseTest {

    private static final long GRACE_MS = 2_000;
    /**
     * From a worker's SIGSTOP to a request naming it, at most: the workers' send timeout (10 s) + 1 s.
     * It takes about 2 s (the liveness probe), which its detail shows: a removal would say NO_RANK
     * or RANK_DOWN, the send timeout "Timed out after waiting".
     */
    private static final long SILENT_NAMED_MS = 11_000;
    /**
     * How long each process stays paused, as the "paused 15 s" asks: the member config
     * removes a node after 10 s without a heartbeat, so the removal, the grace and the checks of the
     * paused state all happen within it.
     */
    private static final Duration PAUSED = Duration.ofSeconds(15);
    /** The most the removal (and the release) may take. */
    private static final Duration PAUSE = Duration.ofSeconds(25);
    private static final Duration START = Duration.ofSeconds(90);
    /** From the resume to serving again: the merge looks every 5 s, then the new incarnation starts. */
    private static final Duration HEAL = Duration.ofSeconds(30);
    /** How long after a comeback the GPU's record must count one share for the cache, what the pool holds. */
    private static final Duration TAKEN_IS_HELD = Duration.ofSeconds(5);
    /** How long the resumed coordinator must stay quiet after it said so, with the one that serves serving. */
    private static final Duration HOLD = Duration.ofSeconds(8);

    private ClusterNode here;
    private CacheProcesses cache;
    private LogLines secondLog;

    @AfterEach
    void tearDown() {
        if (secondLog != null) {
            secondLog.close();
        }
        if (cache != null) {
            cache.close();
        }
        if (here != null) {
            await(here.close());
        }
    }

    @Test
    void aPausedCoordinatorComesBackAsANewOwnerInOneCluster() throws Exception {
        here = TestClusters.startHere(TestClusters.freshName("kvpager-pause"));
        cache = new CacheProcesses(here, "pause", GRACE_MS);
        SpawnedNode coordinator = cache.spawnServing(START, 3);
        String before = cache.ownerOn(0);
        assertThat(here.members()).isEqualTo(4);

        long paused = System.nanoTime();
        coordinator.pause();
        try {
            // the others remove its node, and the workers give its pages back once the grace ends
            await().atMost(PAUSE).pollInterval(Duration.ofMillis(100)).until(() -> here.members() == 3
                    && cache.released(0) && cache.released(1));
            long releasedMs = (System.nanoTime() - paused) / 1_000_000;
            System.out.printf("coordinator paused: removed and its pages released on both workers %d ms after SIGSTOP%n", releasedMs);
            // and so it stays until the pause has lasted its 15 s: nothing of the paused owner comes back
            holdUntil(paused, () -> here.members() == 3 && cache.released(0) && cache.released(1));
        } finally {
            coordinator.resume();
        }
        long resumed = System.nanoTime();

        // one cluster again, the coordinator a new owner that serves, everything agreeing
        String after = cache.awaitNewOwner(coordinator, before, 4, resumed, "coordinator resumed", "SIGCONT", HEAL);
        // one incarnation after the pause, not one on its side of the split before the merge and another after it
        assertThat(Owner.parse(after).epoch()).as("the owner after the resume, %s, follows %s with no incarnation between", after, before)
                .isEqualTo(Owner.parse(before).epoch() + 1);
        assertThat(coordinator.lines().stream().filter(line -> line.contains("back as owner")).toList()).hasSize(1);
        // and each GPU's record holds one share for the cache, what the pool holds, within seconds of serving again
        cache.awaitTakenIsHeld("coordinator resumed", TAKEN_IS_HELD);
        // a request of the owner before is refused, never served
        cache.assertMapOfFormerOwnerRefused(before, 0);
        assertThat(cache.disagreements()).isEmpty();
    }

    /**
     * A coordinator started for the instance while the first one is paused serves (in the test's
     * node, a member all along); the first one, resumed, finds another owner holding the group on
     * the ranks (its own side of the split does not list the new coordinator) and stays displaced
     * and silent: the serving coordinator's pages are never reclaimed, it is never displaced, and
     * every allocation answered is its.
     */
    @Test
    void aCoordinatorStartedDuringThePauseKeepsServingAfterTheResume() throws Exception {
        here = TestClusters.startHere(TestClusters.freshName("kvpager-pause-second"));
        cache = new CacheProcesses(here, "second", GRACE_MS);
        SpawnedNode first = cache.spawnServing(START, 3);
        String before = cache.ownerOn(0);

        first.pause();
        String serving;
        try {
            await().atMost(PAUSE).pollInterval(Duration.ofMillis(100)).until(() -> here.members() == 3
                    && cache.released(0) && cache.released(1));
            // a node started while a member is paused can wait a minute for the cluster (seen once): the test's node serves
            secondLog = LogLines.of(Coordinator.class);
            await(here.deployCache(cache.options()));
            cache.allocPages(3);
            serving = cache.ownerOn(0);
            assertThat(serving).isNotNull().isNotEqualTo(before);
            assertThat(cache.ownerOn(1)).isEqualTo(serving);
        } finally {
            first.resume();
        }
        long resumed = System.nanoTime();

        // the resumed one learns it was displaced, finds the group held by the serving one, and goes quiet
        String quiet = first.awaitLine("this one stays displaced and no longer answers at", HEAL);
        System.out.printf("first coordinator, resumed: %d ms after SIGCONT: %s%n", (System.nanoTime() - resumed) / 1_000_000, quiet);
        assertThat(quiet).contains("no longer answers at kvpager.second.coordinator");
        assertThat(first.lines()).anySatisfy(line -> assertThat(line).contains("was displaced (every rank released the group"));
        await().atMost(HEAL).pollInterval(Duration.ofMillis(100)).until(() -> here.members() == 4);
        // and so it stays, the merge included: the serving owner keeps the group on both ranks, and every
        // allocation answered is answered by it (a request that fails is retried: the traffic goes on)
        List<String> servedByOthers = new CopyOnWriteArrayList<>();
        AtomicInteger served = new AtomicInteger();
        Callable<Boolean> stillServing = () -> {
            JsonObject answer = cache.alloc(CacheProcesses.BLOCKS_PER_PAGE).otherwiseEmpty().await();
            if (answer != null && answer.containsKey("blocks")) {
                served.incrementAndGet();
                if (!serving.equals(answer.getString("owner"))) {
                    servedByOthers.add(answer.encode());
                }
                cache.free(answer.getJsonArray("blocks"), answer.getString("owner"), 10_000).otherwiseEmpty().await();
            }
            return serving.equals(cache.ownerOn(0)) && serving.equals(cache.ownerOn(1));
        };
        await().during(HOLD).atMost(HOLD.plusSeconds(10)).pollInterval(Duration.ofMillis(200)).until(stillServing);
        System.out.printf("first coordinator, resumed: quiet for %d s after it said so, %d allocations served meanwhile%n",
                HOLD.toSeconds(), served.get());
        assertThat(servedByOthers).as("allocations answered by another owner than %s", serving).isEmpty();
        assertThat(served.get()).isPositive();
        assertThat(cache.linesWith("reclaimed from owner " + serving)).as("the serving owner's pages reclaimed on a rank").isZero();
        assertThat(secondLog.lines()).as("the serving coordinator's log").noneMatch(line -> line.contains("was displaced"));
        assertThat(first.lines()).noneMatch(line -> line.contains("back as owner"));
        assertThat(cache.disagreements()).isEmpty();
        cache.readyAndCounted();
    }

    @Test
    void aPausedWorkerComesBackAndTheCacheServesAgain() throws Exception {
        here = TestClusters.startHere(TestClusters.freshName("kvpager-pause-worker"));
        cache = new CacheProcesses(here, "wpause", GRACE_MS);
        SpawnedNode tp0 = cache.spawnWorker(0);
        SpawnedNode tp1 = cache.spawnWorker(1);
        SpawnedNode coordinator = cache.spawnCoordinator();
        tp0.awaitReady(START);
        tp1.awaitReady(START);
        coordinator.awaitReady(START);
        cache.allocPages(3);
        String owner = cache.ownerOn(0);

        long paused = System.nanoTime();
        tp1.pause();
        try {
            // traffic meets the paused rank: the first allocation that needs it (a new page's map, or the
            // owner's lease check once the lease the ranks last stated runs out) names it as soon as its
            // liveness probe goes unanswered, well before the send timeout and the heartbeat's removal
            JsonObject named = null;
            while (named == null) {
                JsonObject answer = await(cache.alloc(CacheProcesses.BLOCKS_PER_PAGE));
                if (answer.containsKey("miss")) {
                    named = answer;
                }
            }
            long namedMs = (System.nanoTime() - paused) / 1_000_000;
            System.out.printf("worker paused: a request named it %d ms after SIGSTOP: %s%n", namedMs, named.encode());
            assertThat(named.getString("detail")).contains("pp0/tp1 TIMEOUT", "liveness probe");
            assertThat(namedMs).as("ms from SIGSTOP to a request naming the rank").isLessThan(SILENT_NAMED_MS);
            // status meanwhile: the coordinator answers within its bound, the paused rank down, the cache degraded
            // (not unreachable), though a budget record the paused member owns in the shared map cannot be read now
            long asked = System.nanoTime();
            JsonObject stats = await(cache.cacheStats(500, 1_500));
            System.out.printf("worker paused: stats answered in %d ms: %s%n", (System.nanoTime() - asked) / 1_000_000, stats.getString("reason"));
            assertThat(stats.getString("state")).as(stats.encode()).isEqualTo("degraded");
            assertThat(stats.getString("reason")).contains("pp0/tp1");
            // removed: the coordinator counts the rank down, and an allocation names it instead of waiting
            await().atMost(PAUSE).pollInterval(Duration.ofMillis(100)).until(() -> here.members() == 3);
            System.out.printf("worker paused: its node removed %d ms after SIGSTOP%n", (System.nanoTime() - paused) / 1_000_000);
            // the coordinator's process hears of the removal a moment after this node: until then an
            // allocation still probes the rank and misses MAP_FAILED naming it; then RANK_DOWN, at once (bounded by
            // PAUSE: on a loaded build machine the coordinator's process heard of the removal more than 10 s late)
            JsonObject missed = await().atMost(PAUSE).pollInterval(Duration.ofMillis(100))
                    .until(() -> await(cache.alloc(CacheProcesses.BLOCKS_PER_PAGE)), answer -> {
                        if (!answer.containsKey("miss")) {
                            return false;
                        }
                        assertThat(answer.getString("detail", "")).as(answer.encode()).contains("pp0/tp1");
                        return "RANK_DOWN".equals(answer.getString("miss"));
                    });
            assertThat(missed.getString("detail")).contains("pp0/tp1");
            // and so it stays until the pause has lasted its 15 s: every allocation that needs a page misses naming the rank
            holdUntil(paused, () -> {
                JsonObject answer = await(cache.alloc(CacheProcesses.BLOCKS_PER_PAGE));
                return here.members() == 3 && "RANK_DOWN".equals(answer.getString("miss")) && answer.getString("detail", "").contains("pp0/tp1");
            });
        } finally {
            tp1.resume();
        }
        long resumed = System.nanoTime();

        // one cluster again, the rank back with the pool's pages, the same owner serving
        await().atMost(HEAL).pollInterval(Duration.ofMillis(100)).until(() -> here.members() == 4);
        long mergedMs = (System.nanoTime() - resumed) / 1_000_000;
        Duration firstAlloc = cache.untilAllocates(HEAL);
        System.out.printf("worker resumed: one cluster %d ms after SIGCONT, first alloc served %d ms after it (%d ms of tries)%n",
                mergedMs, (System.nanoTime() - resumed) / 1_000_000, firstAlloc.toMillis());
        await().atMost(HEAL).until(() -> cache.disagreements().isEmpty());
        assertThat(cache.ownerOn(0)).isEqualTo(owner);
        assertThat(cache.ownerOn(1)).isEqualTo(owner);
        cache.readyAndCounted();
    }

    /** Requires {@code paused} to hold from now until {@link #PAUSED} after {@code since} (System.nanoTime). */
    private static void holdUntil(long since, java.util.concurrent.Callable<Boolean> paused) {
        long leftMs = PAUSED.toMillis() - (System.nanoTime() - since) / 1_000_000;
        if (leftMs > 0) {
            await().during(Duration.ofMillis(leftMs)).atMost(Duration.ofMillis(leftMs + 3_000)).pollInterval(Duration.ofMillis(200))
                    .until(paused);
        }
    }

}
