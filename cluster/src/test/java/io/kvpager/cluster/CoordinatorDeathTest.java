package io.kvpager.cluster;

import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.AppenderBase;
import io.kvpager.cache.KvCache;
import io.kvpager.cluster.process.CacheProcesses;
import io.kvpager.cluster.process.SpawnedNode;
import io.kvpager.cluster.process.TestClusters;
import io.kvpager.internal.membership.ClusterMembership;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.slf4j.LoggerFactory;

import java.time.Duration;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

import static io.kvpager.cluster.process.TestClusters.await;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * A TP=2 cache whose workers and coordinator run in processes of their own, and what its
 * coordinator's death leaves: killed with SIGKILL mid-traffic, its pages and handles are released
 * on every worker within the grace period plus 5 s and its directory entry is removed once by a
 * survivor; a coordinator restarted with the same options serves its first alloc within 3 s of
 * being ready; one started before the grace ends reclaims what the killed one left; one stopped
 * with SIGTERM unregisters before its node closes and destroys its tensors. After each step the
 * coordinator's ledger, the workers' stats and their devices agree.
 */
@Timeout(value = 300, unit = TimeUnit.SECONDS)
class CoordinatorDeathTest {

    private static final long GRACE_MS = 4_000;
    private static final Duration START = Duration.ofSeconds(90);
    private static final Duration SETTLE = Duration.ofSeconds(20);
    private static final String SWEPT = "directory: removed the coordinator of instance death";

    private ClusterNode here;
    private CacheProcesses cache;
    private final AtomicLong sweptHere = new AtomicLong();
    private final AppenderBase<ILoggingEvent> sweeps = new AppenderBase<>() {
        @Override
        protected void append(ILoggingEvent event) {
            if (event.getFormattedMessage().contains(SWEPT)) {
                sweptHere.incrementAndGet();
            }
        }
    };

    @AfterEach
    void tearDown() {
        ((Logger) LoggerFactory.getLogger(ClusterDirectory.class)).detachAppender(sweeps);
        if (cache != null) {
            cache.close();
        }
        if (here != null) {
            await(here.close());
        }
    }

    @Test
    void aDeadCoordinatorLeavesNothingBehindAndANewOneServesAtOnce() {
        here = TestClusters.startHere(TestClusters.freshName("kvpager-death"));
        sweeps.start();
        ((Logger) LoggerFactory.getLogger(ClusterDirectory.class)).addAppender(sweeps);
        Set<String> left = ConcurrentHashMap.newKeySet();
        ClusterMembership.of(here.vertx()).subscribe(here.vertx().getOrCreateContext(), left::add);
        ClusterDirectory directory = here.directory();
        cache = new CacheProcesses(here, "death", GRACE_MS);
        SpawnedNode tp0 = cache.spawnWorker(0);
        SpawnedNode tp1 = cache.spawnWorker(1);
        SpawnedNode first = cache.spawnCoordinator();
        tp0.awaitReady(START);
        tp1.awaitReady(START);
        String firstNode = first.awaitReady(START);
        assertThat(await(directory.coordinated())).containsExactly("death");
        assertThat(await(directory.registeredWorkers())).extracting(RegisteredWorker::rank).containsExactly("pp0/tp0", "pp0/tp1");
        assertThat(await(directory.workersWithoutCoordinator())).isEmpty();

        // (a) SIGKILL mid-traffic: every worker releases the dead owner's pages and handles within the grace + 5 s:
        // the node is counted gone when its connections drop (1.6 s seen with the suite's other JVM beside it),
        // long before the 10 s heartbeat timeout, whose removal would come after grace + 10 s. Each node hears it
        // from its member list (ClusterMembership.watchMembers): Vert.x's node-left callback, which comes after
        // Vert.x removed the dead node's consumers from the cluster's registry, once came 4.7 s after the member
        // had dropped the node, and failed this bound in a CI run before the watch
        for (int i = 0; i < 6; i++) {
            allocated();
        }
        Traffic traffic = new Traffic(cache);
        await().atMost(SETTLE).until(() -> traffic.served() >= 3);
        assertThat(cache.workerStats(0).getJsonObject("groups").getJsonObject("0").getString("owner")).startsWith(firstNode + "#");
        long killed = System.nanoTime();
        first.kill();
        await().atMost(Duration.ofMillis(GRACE_MS + 5_000)).pollInterval(Duration.ofMillis(20))
                .until(() -> cache.released(0) && cache.released(1));
        long releasedMs = (System.nanoTime() - killed) / 1_000_000;
        traffic.stop();
        System.out.printf("coordinator killed after %d allocations in traffic: both workers released its pages and handles "
                + "%d ms after the kill (grace %d ms)%n", traffic.served(), releasedMs, GRACE_MS);
        // its directory entry goes, removed by one survivor; its workers are listed as coordinated by nobody
        await().atMost(SETTLE).until(() -> !await(directory.coordinated()).contains("death"));
        assertThat(await(directory.workersWithoutCoordinator())).extracting(RegisteredWorker::rank)
                .containsExactly("pp0/tp0", "pp0/tp1");
        await().atMost(SETTLE).until(() -> sweeps() == 1);

        // (b) restarted with the same options: its first alloc within 3 s of being ready, and everything agrees
        SpawnedNode second = cache.spawnCoordinator();
        String secondNode = second.awaitReady(START);
        Duration firstAlloc = cache.untilAllocates(Duration.ofSeconds(3));
        System.out.printf("restarted coordinator: first alloc served %d ms after it was ready%n", firstAlloc.toMillis());
        for (int i = 0; i < 2; i++) {
            allocated();
        }
        await().atMost(SETTLE).until(() -> cache.disagreements().isEmpty());
        assertThat(await(directory.workersWithoutCoordinator())).isEmpty();

        // a new coordinator that starts before the grace ends reclaims what the killed one left, and starts clean
        String secondOwner = cache.workerStats(0).getJsonObject("groups").getJsonObject("0").getString("owner");
        second.kill();
        await().atMost(SETTLE).until(() -> left.contains(secondNode));
        await().atMost(SETTLE).until(() -> !await(directory.coordinated()).contains("death"));
        // the killed coordinator's consumer is gone from the cluster's registry, so the address is free again
        await().atMost(SETTLE).until(() -> await(ClusterMembership.of(here.vertx()).nodesServing(here.vertx().getOrCreateContext(),
                "kvpager.death.coordinator")).isEmpty());
        KvCache third = await(here.deployCache(cache.options()));
        assertThat(cache.linesWith("reclaimed from owner " + secondOwner + " (claimed by " + here.nodeId() + "#"))
                .as("both workers reclaimed the tensors the killed coordinator left").isEqualTo(2);
        JsonObject claimed = cache.workerStats(1);
        assertThat(claimed.getJsonObject("groups").getJsonObject("0").getLong("mappedPages")).isZero();
        assertThat(claimed.getInteger("lapsingLeases")).as("the killed owner's lease, cancelled by the claim").isZero();
        assertThat(cache.untilAllocates(Duration.ofSeconds(3))).isLessThan(Duration.ofSeconds(3));
        await().atMost(SETTLE).until(() -> cache.disagreements().isEmpty());
        await(third.close());
        await(directory.unregisterCoordinator("death"));
        assertThat(cache.released(0) && cache.released(1)).as("a closed cache destroys its tensors").isTrue();
        await().atMost(SETTLE).until(() -> sweeps() == 2);

        // SIGTERM: the coordinator unregisters before its node closes, and destroys its tensors
        SpawnedNode fourth = cache.spawnCoordinator();
        String fourthNode = fourth.awaitReady(START);
        allocated();
        assertThat(await(directory.coordinated())).containsExactly("death");
        fourth.terminateAndWait();
        assertThat(await(directory.coordinated())).as("the instance once its coordinator exited").isEmpty();
        assertThat(fourth.lines()).anySatisfy(line -> assertThat(line).contains("directory: node " + fourthNode
                + " removed its 1 entry before leaving"));
        assertThat(cache.released(0) && cache.released(1)).as("the stopped coordinator destroyed its tensors").isTrue();
        await().atMost(SETTLE).until(() -> left.contains(fourthNode));
        assertThat(sweeps()).as("entries removed by a survivor: the two killed coordinators' only").isEqualTo(2);
    }

    private long sweeps() {
        return sweptHere.get() + cache.linesWith(SWEPT);
    }

    private void allocated() {
        JsonObject answer = await(cache.alloc(CacheProcesses.BLOCKS_PER_PAGE));
        assertThat(answer.containsKey("blocks")).as(answer.encode()).isTrue();
    }

    /** Allocations and frees one after the other from the test's node, until stopped: the traffic a coordinator dies in. */
    private static final class Traffic {
        private final CacheProcesses cache;
        private final AtomicLong served = new AtomicLong();
        private volatile boolean stopped;
        private JsonArray held;

        Traffic(CacheProcesses cache) {
            this.cache = cache;
            next();
        }

        private void next() {
            if (stopped) {
                return;
            }
            (held == null ? cache.alloc(CacheProcesses.BLOCKS_PER_PAGE).map(answer -> {
                if (answer.containsKey("blocks")) {
                    held = answer.getJsonArray("blocks");
                    served.incrementAndGet();
                }
                return answer;
            }) : cache.free(held).andThen(freed -> held = null)).onComplete(done -> {
                // the coordinator died: its traffic ends with it
                if (done.succeeded()) {
                    next();
                }
            });
        }

        long served() {
            return served.get();
        }

        void stop() {
            stopped = true;
        }
    }
}
