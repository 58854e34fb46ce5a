package io.kvpager.cluster;

import io.kvpager.FailureCode;
import io.kvpager.cluster.process.CacheProcesses;
import io.kvpager.cluster.process.SpawnedNode;
import io.kvpager.cluster.process.TestClusters;
import io.kvpager.internal.books.SealedBooks;
import io.kvpager.impl.broker.GpuBroker;
import io.vertx.core.AsyncResult;
import io.vertx.core.Context;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.eventbus.ReplyException;
import io.vertx.core.eventbus.ReplyFailure;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import io.vertx.core.shareddata.AsyncMap;
import org.awaitility.core.ConditionTimeoutException;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.LongAdder;

import static io.kvpager.cluster.process.TestClusters.await;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * Pause/resume cycles of random processes of a TP=2 cache (its coordinator, either worker) under
 * allocation traffic, seeded. Each cycle pauses one process with SIGSTOP until the cluster has
 * removed it (for the coordinator, until both workers have also given its pages back), resumes it,
 * and waits until the cache serves again; the traffic runs throughout. Checked:
 * <ul>
 *   <li>nothing stuck: every caller's request completes, served or failed with a named code,
 *       within its deadline;</li>
 *   <li>no over-grant: every 100 ms each GPU's budget record is read from the cluster's shared data,
 *       and the shares it grants never add up to more than the GPU's capacity;</li>
 *   <li>after each cycle, with the traffic held: ledger = workers = devices, one handle per mapped
 *       page, and every GPU's record covering what the pool holds there;</li>
 *   <li>no leak: at the end every caller frees what it holds (blocks of an owner before are refused
 *       {@code DISPLACED}), the ledger holds no block, and once the coordinator stops both workers
 *       hold no group, no handle, no device memory, and no GPU record a share of the pool.</li>
 * </ul>
 * {@code -Dkvpager.pauseSoak.cycles=N} (10 by default) and {@code -Dkvpager.pauseSoak.seed=S} run a
 * longer or another soak (docs/cluster.md, "Pause soak").
 */
@Timeout(value = 60, unit = TimeUnit.MINUTES)
class PauseSoakTest {

    private static final int CYCLES = Integer.getInteger("kvpager.pauseSoak.cycles", 10);
    private static final long SEED = Long.getLong("kvpager.pauseSoak.seed", 26L);
    private static final int CALLERS = 3;
    private static final long GRACE_MS = 2_000;
    /** Each caller's request deadline: a pause past the heartbeat, then the heal. */
    private static final long DEADLINE_MS = 40_000;
    /** Completing later than the deadline by more than this counts as stuck. */
    private static final long STUCK_SLACK_MS = 2_000;
    /** Two pools' worth: a new owner's claim fits while the share of the owner before it lingers. */
    private static final long GPU_BYTES = 2 * 16 * CacheProcesses.PAGE_ID_BYTES;
    private static final Duration START = Duration.ofSeconds(90);
    private static final Duration PAUSE = Duration.ofSeconds(40);
    private static final Duration HEAL = Duration.ofSeconds(60);

    private ClusterNode here;
    private CacheProcesses cache;
    private final Map<String, LongAdder> outcomes = new ConcurrentHashMap<>();
    /** This cycle's DISPLACED answers, and when (System.nanoTime) the first and the last came. */
    private final LongAdder displacedInCycle = new LongAdder();
    private final java.util.concurrent.atomic.AtomicLong firstDisplaced = new java.util.concurrent.atomic.AtomicLong();
    private final java.util.concurrent.atomic.AtomicLong lastDisplaced = new java.util.concurrent.atomic.AtomicLong();
    private final LongAdder stuck = new LongAdder();
    private final LongAdder samples = new LongAdder();
    private final LongAdder unreadSamples = new LongAdder();
    private final AtomicLong maxOverGrant = new AtomicLong();
    private final List<String> overGrants = new ArrayList<>();
    private final List<String> splitOff = new ArrayList<>();
    private volatile boolean holding;
    private volatile boolean stopping;

    /** One engine's worth of traffic: what it holds, under the owner that handed it out. */
    private final class Caller {
        final SplittableRandom random;
        final Deque<JsonObject> held = new ArrayDeque<>();
        final Promise<Void> done = Promise.promise();
        volatile boolean inFlight;

        Caller(SplittableRandom random) {
            this.random = random;
        }
    }

    @AfterEach
    void tearDown() {
        stopping = true;
        if (cache != null) {
            cache.close();
        }
        if (here != null) {
            await(here.close());
        }
    }

    @Test
    void pausesOfRandomProcessesUnderTrafficLeakNothingOverGrantNothingAndLeaveNothingStuck() throws Exception {
        SplittableRandom random = new SplittableRandom(SEED);
        here = TestClusters.startHere(TestClusters.freshName("kvpager-pause-soak"));
        cache = new CacheProcesses(here, "psoak", GRACE_MS);
        SpawnedNode tp0 = cache.spawnWorker(0, new JsonArray(), GPU_BYTES);
        SpawnedNode tp1 = cache.spawnWorker(1, new JsonArray(), GPU_BYTES);
        SpawnedNode coordinator = cache.spawnCoordinator();
        tp0.awaitReady(START);
        tp1.awaitReady(START);
        coordinator.awaitReady(START);
        cache.untilAllocates(START);
        List<String> gpus = new ArrayList<>();
        JsonArray gpuStats = await(cache.cacheStats()).getJsonArray("gpus");
        for (int i = 0; i < gpuStats.size(); i++) {
            gpus.add(gpuStats.getJsonObject(i).getString("gpu"));
        }
        assertThat(gpus).hasSize(2);

        Context traffic = here.vertx().getOrCreateContext();
        long sampler = sampleTheBudget(gpus);
        List<Caller> callers = new ArrayList<>();
        for (int i = 0; i < CALLERS; i++) {
            Caller caller = new Caller(random.split());
            callers.add(caller);
            traffic.runOnContext(v -> next(caller));
        }

        SpawnedNode[] processes = {coordinator, tp0, tp1};
        String[] names = {"coordinator", "pp0/tp0", "pp0/tp1"};
        Map<String, Integer> paused = new TreeMap<>();
        long began = System.nanoTime();
        for (int cycle = 1; cycle <= CYCLES; cycle++) {
            int victim = random.nextInt(processes.length);
            paused.merge(names[victim], 1, Integer::sum);
            displacedInCycle.reset();
            firstDisplaced.set(0);
            long stopped = System.nanoTime();
            processes[victim].pause();
            long removedMs;
            // the fewest members this node counts while the victim is paused: below 3, a member that runs
            // on was split off too (docs/cluster.md, "A pause that split a healthy member off")
            int[] fewest = {Integer.MAX_VALUE};
            // while the membership settles a request may fail for a moment (a registration not yet back):
            // each wait asks again until its bound, which a lasting failure still exceeds
            try {
                await().ignoreExceptions().atMost(PAUSE).pollInterval(Duration.ofMillis(100)).until(() -> counted(fewest) == 3);
                if (victim == 0) {
                    await().ignoreExceptions().atMost(PAUSE).pollInterval(Duration.ofMillis(100))
                            .until(() -> {
                                counted(fewest);
                                return cache.released(0) && cache.released(1);
                            });
                }
                removedMs = (System.nanoTime() - stopped) / 1_000_000;
            } catch (ConditionTimeoutException e) {
                throw new AssertionError("cycle " + cycle + ": " + names[victim] + " paused was not " + (victim == 0 ? "removed and released" : "removed")
                        + " within " + PAUSE.toSeconds() + " s; this node counted " + fewest[0] + " members at the fewest"
                        + (fewest[0] < 3 ? " (a member that ran on was split off too)" : ""), e);
            } finally {
                processes[victim].resume();
            }
            long resumed = System.nanoTime();
            if (fewest[0] < 3) {
                splitOff.add("cycle " + cycle + " (" + names[victim] + " paused): " + fewest[0] + " members at the fewest");
            }
            await().ignoreExceptions().atMost(HEAL).pollInterval(Duration.ofMillis(100)).until(() -> here.members() == 4);
            cache.untilAllocates(HEAL);
            long servedMs = (System.nanoTime() - resumed) / 1_000_000;

            // the traffic held, everything agrees
            hold(callers);
            await().ignoreExceptions().atMost(HEAL).pollInterval(Duration.ofMillis(200)).until(() -> cache.disagreements().isEmpty());
            CacheProcesses.budgetCoversThePools(await(cache.cacheStats()));
            holding = false;
            callers.forEach(caller -> traffic.runOnContext(v -> next(caller)));
            long displaced = displacedInCycle.sum();
            System.out.printf("pause soak cycle %d/%d: %s paused, %s %d ms after SIGSTOP, serving again %d ms after SIGCONT%s%s%n",
                    cycle, CYCLES, names[victim], victim == 0 ? "removed and released" : "removed", removedMs, servedMs,
                    displaced == 0 ? "" : ", " + displaced + " answers DISPLACED from " + (firstDisplaced.get() - resumed) / 1_000_000
                            + " to " + (lastDisplaced.get() - resumed) / 1_000_000 + " ms after SIGCONT",
                    fewest[0] < 3 ? ", a member that ran on was split off too" : "");
        }

        // the end: everything held is freed, nothing is left anywhere
        hold(callers);
        for (Caller caller : callers) {
            Promise<Void> freed = Promise.promise();
            traffic.runOnContext(v -> freeAll(caller, freed));
            freed.future().await(2 * DEADLINE_MS, TimeUnit.MILLISECONDS);
        }
        stopping = true;
        here.vertx().cancelTimer(sampler);
        await().ignoreExceptions().atMost(HEAL).until(() -> cache.disagreements().isEmpty());
        long leftInLedger = await(cache.cacheStats()).getJsonObject("pool").getLong("usedBlocks");
        coordinator.terminateAndWait();
        await().ignoreExceptions().atMost(HEAL).pollInterval(Duration.ofMillis(200)).until(() -> cache.released(0) && cache.released(1));
        AsyncMap<String, String> shares = await(SealedBooks.keptText(here.vertx(), GpuBroker.SHARES));
        await().ignoreExceptions().atMost(HEAL).pollInterval(Duration.ofMillis(200)).until(() -> gpus.stream()
                .noneMatch(gpu -> String.valueOf(await(shares.get(gpu))).contains("psoak.group0")));

        System.out.printf("pause soak: seed %d, %d cycles %s in %d s, %s, stuck %d, budget samples %d (unread %d), max over-grant %d bytes,"
                        + " blocks left in the ledger %d, cycles with a member split off %d%n", SEED, CYCLES, paused, (System.nanoTime() - began) / 1_000_000_000,
                new TreeMap<>(outcomes), stuck.sum(), samples.sum(), unreadSamples.sum(), maxOverGrant.get(), leftInLedger, splitOff.size());
        assertThat(splitOff).as("cycles in which a member that ran on was split off while another was paused").isEmpty();
        assertThat(stuck.sum()).as("requests not answered within their deadline").isZero();
        assertThat(overGrants).as("budget records granting more than the GPU").isEmpty();
        assertThat(samples.sum()).as("budget samples").isPositive();
        assertThat(leftInLedger).as("blocks the ledger holds that no caller does").isZero();
        assertThat(outcomes).containsKey("alloc served");
    }

    /** The members this node counts now, kept in {@code fewest[0]} when fewer than before. */
    private int counted(int[] fewest) {
        int members = here.members();
        fewest[0] = Math.min(fewest[0], members);
        return members;
    }

    /** Stops the callers taking new steps and waits until none has a request in flight. */
    private void hold(List<Caller> callers) {
        holding = true;
        await().ignoreExceptions().atMost(Duration.ofMillis(DEADLINE_MS + 2 * STUCK_SLACK_MS)).pollInterval(Duration.ofMillis(50))
                .until(() -> callers.stream().noneMatch(caller -> caller.inFlight));
    }

    /** The caller's next step: an allocation, or a free of the oldest blocks it holds. */
    private void next(Caller caller) {
        if (holding || stopping || caller.inFlight) {
            return;
        }
        caller.inFlight = true;
        long started = System.nanoTime();
        if (!caller.held.isEmpty() && (caller.held.size() >= 4 || caller.random.nextBoolean())) {
            JsonObject held = caller.held.removeFirst();
            cache.free(held.getJsonArray("blocks"), held.getString("owner"), DEADLINE_MS)
                    .onComplete(ar -> stepDone(caller, "free", ar, started));
        } else {
            cache.alloc(1 + caller.random.nextInt(48), DEADLINE_MS).onComplete(ar -> {
                if (ar.succeeded() && ar.result().containsKey("blocks")) {
                    caller.held.addLast(ar.result());
                }
                stepDone(caller, "alloc", ar, started);
            });
        }
    }

    private void stepDone(Caller caller, String action, AsyncResult<JsonObject> ar, long started) {
        count(action, ar, started);
        caller.inFlight = false;
        if (!holding && !stopping) {
            here.vertx().setTimer(5 + caller.random.nextInt(20), id -> next(caller));
        }
    }

    /** Frees every block the caller holds, one allocation at a time. */
    private void freeAll(Caller caller, Promise<Void> freed) {
        JsonObject held = caller.held.pollFirst();
        if (held == null) {
            freed.complete();
            return;
        }
        long started = System.nanoTime();
        cache.free(held.getJsonArray("blocks"), held.getString("owner"), DEADLINE_MS).onComplete(ar -> {
            count("free", ar, started);
            freeAll(caller, freed);
        });
    }

    private void count(String action, AsyncResult<JsonObject> ar, long started) {
        long tookMs = (System.nanoTime() - started) / 1_000_000;
        if (tookMs > DEADLINE_MS + STUCK_SLACK_MS) {
            stuck.increment();
        }
        String outcome;
        if (ar.succeeded()) {
            outcome = ar.result().containsKey("miss") ? action + " missed " + ar.result().getString("miss") : action + " served";
        } else if (ar.cause() instanceof ReplyException r && r.failureType() == ReplyFailure.RECIPIENT_FAILURE) {
            outcome = action + " failed " + FailureCode.of(r.failureCode()).name();
            if (r.failureCode() == FailureCode.DISPLACED.code()) {
                long now = System.nanoTime();
                displacedInCycle.increment();
                firstDisplaced.compareAndSet(0, now);
                lastDisplaced.set(now);
            }
        } else if (ar.cause() instanceof ReplyException r) {
            outcome = action + " failed " + r.failureType().name();
        } else {
            outcome = action + " failed " + ar.cause();
            stuck.increment();
        }
        outcomes.computeIfAbsent(outcome, k -> new LongAdder()).increment();
    }

    /** Every 100 ms, each GPU's budget record against its capacity, as the cluster's shared data holds them. */
    private long sampleTheBudget(List<String> gpus) {
        AsyncMap<String, String> shares = await(SealedBooks.keptText(here.vertx(), GpuBroker.SHARES));
        AsyncMap<String, Long> capacities = await(SealedBooks.keptLongs(here.vertx(), GpuBroker.CAPACITIES));
        boolean[] reading = new boolean[1];
        return here.vertx().setPeriodic(100, id -> {
            if (reading[0] || stopping) {
                return;
            }
            reading[0] = true;
            List<Future<Void>> reads = new ArrayList<>();
            for (String gpu : gpus) {
                reads.add(Future.all(shares.get(gpu), capacities.get(gpu)).map(both -> {
                    String record = both.resultAt(0);
                    Long capacity = both.resultAt(1);
                    samples.increment();
                    long granted = 0;
                    if (record != null && !record.isEmpty()) {
                        JsonObject json = new JsonObject(record);
                        for (String pool : json.fieldNames()) {
                            granted += json.getJsonObject(pool).getLong("bytes");
                        }
                    }
                    long over = capacity == null ? 0 : granted - capacity;
                    if (over > 0) {
                        maxOverGrant.accumulateAndGet(over, Math::max);
                        synchronized (overGrants) {
                            overGrants.add(gpu + ": " + record + " over a capacity of " + capacity);
                        }
                    }
                    return (Void) null;
                }).recover(e -> {
                    unreadSamples.increment();
                    return Future.succeededFuture();
                }));
            }
            Future.join(reads).onComplete(done -> reading[0] = false);
        });
    }
}
