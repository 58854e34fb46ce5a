package io.kvpager.harness.fuzz;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.AppenderBase;
import io.kvpager.Allocation;
import io.kvpager.Layout;
import io.kvpager.cache.KvCache;
import io.kvpager.cache.KvCacheOptions;
import io.kvpager.core.LedgerStats;
import io.kvpager.core.PageState;
import io.kvpager.harness.Bounded;
import io.kvpager.internal.CoordinatorView;
import io.kvpager.harness.PoolSnapshot;
import io.kvpager.harness.SimRanks;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.eventbus.DeliveryOptions;
import io.vertx.core.json.JsonObject;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.slf4j.LoggerFactory;

import java.lang.management.ManagementFactory;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * 100,000 malformed and hostile messages (see {@link HostileMessages}) to the four workers and the
 * coordinator of a PER_LAYER pool with pages mapped, blocks allocated and a reserve: every one is
 * refused with the code it deserves, none goes unanswered, nothing the workers, the devices or the
 * coordinator hold changes, no handler fails unexpectedly (an error in the log, or an exception
 * Vert.x caught), and the heap after GC grows by no more than the bounded answer caches can hold.
 * {@code -Dkvpager.fuzz.messages=N} and {@code -Dkvpager.fuzz.seed=S} change the run.
 */
class FuzzTest {

    private static final String NAME = "fuzz";
    private static final Duration BOUND = Duration.ofSeconds(30);
    /**
     * Heap the run may keep: the workers' answer caches, 4 × 4,096 answers of a few hundred bytes
     * each, with room to spare. (When refusals were remembered with their whole bodies, this run
     * kept about 140 MiB.)
     */
    private static final long HEAP_BOUND = 24L << 20;

    private Vertx vertx;
    private SimRanks ranks;
    private KvCache cache;
    private final List<String> errors = new CopyOnWriteArrayList<>();
    private final AppenderBase<ILoggingEvent> errorLog = new AppenderBase<>() {
        @Override
        protected void append(ILoggingEvent event) {
            if (event.getLevel().isGreaterOrEqual(Level.ERROR)) {
                errors.add(event.getLoggerName() + ": " + event.getFormattedMessage());
            }
        }
    };

    @BeforeEach
    void start() {
        vertx = Vertx.vertx();
        vertx.exceptionHandler(e -> errors.add("Vert.x caught " + e));
        errorLog.start();
        ((Logger) LoggerFactory.getLogger(Logger.ROOT_LOGGER_NAME)).addAppender(errorLog);
        ranks = Bounded.await(SimRanks.deploy(vertx, NAME, 4, new JsonObject().put("capacityBytes", 1L << 30)), BOUND, "workers");
        cache = Bounded.await(KvCache.deploy(vertx, new KvCacheOptions().setInstance(NAME).setTp(4).setLayers(2).setKvBuffers(2)
                .setBlockBytes(512 << 10).setPages(16).setLayout(Layout.PER_LAYER).setReserveLow(2).setReserveHigh(2)
                .setAdaptiveReserve(false).setRefillIntervalMs(5).setSendTimeoutMs(10_000)), BOUND, "the cache");
    }

    @AfterEach
    void stop() {
        ((Logger) LoggerFactory.getLogger(Logger.ROOT_LOGGER_NAME)).detachAppender(errorLog);
        if (cache != null) {
            Bounded.await(cache.close(), BOUND, "closing the cache");
        }
        Bounded.await(ranks.close(), BOUND, "closing the workers");
        assertThat(ranks.leftOver()).isEmpty();
        ranks.forgetGpus();
        Bounded.await(vertx.close(), BOUND, "closing Vert.x");
    }

    @Test
    void everyHostileMessageIsRefusedAndChangesNothing() {
        long messages = Long.getLong("kvpager.fuzz.messages", 100_000);
        long seed = Long.getLong("kvpager.fuzz.seed", 7);
        Allocation held = Bounded.await(cache.alloc(3 * 4 + 2), BOUND, "an allocation");
        assertThat(held.isMiss()).isFalse();
        CoordinatorView view = CoordinatorView.of(cache);
        await().atMost(BOUND).until(() -> Bounded.await(view.call(c -> c.ledger().stats().reservePages()), BOUND, "reserve") == 2);
        // the GPU leases give their surplus back once idle: settled first, the fuzz's own run time shows as no change
        await().atMost(BOUND).until(() -> Bounded.await(cache.stats(), BOUND, "stats").gpus().stream()
                .allMatch(gpu -> gpu.leasedBytes() == gpu.heldBytes()));
        State before = state(view);
        PoolFacts facts = Bounded.await(view.call(c -> {
            List<Integer> mapped = new ArrayList<>();
            for (int p = 0; p < 16; p++) {
                PageState s = c.ledger().pageState(p);
                if (s == PageState.IN_USE || s == PageState.RESERVE || s == PageState.RECLAIMED) {
                    mapped.add(p);
                }
            }
            return new PoolFacts(NAME, 4, 0, c.options().geometry(), mapped.stream().mapToInt(Integer::intValue).toArray(),
                    held.blocks(), c.owner().toString());
        }), BOUND, "the pool's facts");
        long heapBefore = heapAfterGc();

        System.out.println("fuzz: " + messages + " messages, seed " + seed);
        FuzzReport report = Bounded.await(new Fuzz(vertx, facts, seed, 256, BOUND).run(messages), Duration.ofMinutes(5), "the fuzz");
        long heapAfter = heapAfterGc();
        System.out.println(report.describe());
        System.out.printf("fuzz: heap after GC %.1f MiB before, %.1f MiB after%n", heapBefore / 1048576.0, heapAfter / 1048576.0);

        assertThat(report.wrong()).as("messages answered otherwise than expected (%d in all)", report.wrongCount()).isEmpty();
        assertThat(report.sent()).isEqualTo(messages);
        assertThat(report.byCode().keySet()).as("answers").isSubsetOf("400", "404", "409");
        assertThat(errors).as("errors logged or caught while refusing").isEmpty();
        State after = state(view);
        assertThat(after.workers()).as("the workers' stats").isEqualTo(before.workers());
        assertThat(after.ledger()).as("the ledger").isEqualTo(before.ledger());
        assertThat(after.cache()).as("the cache's stats").isEqualTo(before.cache());
        assertThat(after.devices()).as("the devices").isEqualTo(before.devices());
        assertThat(heapAfter - heapBefore).as("heap kept by the run").isLessThanOrEqualTo(HEAP_BOUND);

        // the pool still works
        Bounded.await(cache.free(held), BOUND, "freeing");
        assertThat(Bounded.await(cache.alloc(5 * 4), BOUND, "an allocation after the fuzz").isMiss()).isFalse();
    }

    /** Everything a refused message must leave as it was. */
    private record State(List<JsonObject> workers, LedgerStats ledger, JsonObject cache, List<String> devices) {
    }

    private State state(CoordinatorView view) {
        PoolSnapshot snapshot = Bounded.await(PoolSnapshot.atRest(vertx, cache, ranks, BOUND), BOUND, "a snapshot");
        assertThat(snapshot.disagreements()).as(snapshot.summary()).isEmpty();
        List<Future<JsonObject>> stats = new ArrayList<>();
        for (int r = 0; r < 4; r++) {
            stats.add(vertx.eventBus().<JsonObject>request(ranks.address(r), new JsonObject(),
                    new DeliveryOptions().addHeader("action", "stats")).map(m -> m.body()));
        }
        List<JsonObject> workers = new ArrayList<>();
        for (Future<JsonObject> s : stats) {
            workers.add(Bounded.await(s, BOUND, "a worker's stats"));
        }
        JsonObject cacheStats = Bounded.await(cache.stats(), BOUND, "the cache's stats").toJson();
        return new State(workers, snapshot.ledger(), cacheStats, ranks.accounting());
    }

    private static long heapAfterGc() {
        for (int i = 0; i < 3; i++) {
            System.gc();
        }
        return ManagementFactory.getMemoryMXBean().getHeapMemoryUsage().getUsed();
    }
}
