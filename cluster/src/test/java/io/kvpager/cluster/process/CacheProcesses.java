package io.kvpager.cluster.process;

import static org.assertj.core.api.Assertions.assertThat;

import io.kvpager.FailureCode;
import io.kvpager.cache.KvCacheOptions;
import io.kvpager.cluster.ClusterNode;
import io.kvpager.protocol.Owner;
import io.kvpager.sim.SimOptions;
import io.kvpager.cluster.ClusterNodeOptions;
import io.kvpager.worker.RankWorker;
import io.kvpager.worker.RankWorkerOptions;
import io.vertx.core.Future;
import io.vertx.core.eventbus.DeliveryOptions;
import io.vertx.core.eventbus.ReplyException;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import org.awaitility.Awaitility;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

/**
 * A TP=2 cache on simulated GPUs whose two rank workers and whose coordinator each run in a
 * process of their own, driven from the test's node over the event bus as any client would:
 * {@code alloc}, {@code free} and {@code stats} to the coordinator, {@code stats} to each worker.
 * Geometry: 2 layers × K and V of 64 KiB blocks, 2 MiB pages (32 blocks per page id, one 8 MiB
 * handle per page id and rank), 16 page ids. Every node binds the address of the test's node and
 * has its quorum, except a coordinator spawned in a {@link NetworkNamespace}, which binds the
 * namespace's end.
 */
public final class CacheProcesses implements AutoCloseable {

    public static final int BLOCKS_PER_PAGE = 32;
    /** One page id's handle on one rank. */
    public static final long PAGE_ID_BYTES = 8L << 20;
    private static final long SEND_TIMEOUT_MS = 10_000;
    private static final long REQUEST_TIMEOUT_MS = 15_000;

    private final ClusterNode here;
    private final String instance;
    private final long leaseGraceMs;
    private final List<SpawnedNode> spawned = new ArrayList<>();
    private int serial;

    /**
     * @param here the node the test runs in, which the others join through
     * @param leaseGraceMs the workers' grace period for the groups of an owner whose node left
     */
    public CacheProcesses(ClusterNode here, String instance, long leaseGraceMs) {
        this.here = here;
        this.instance = instance;
        this.leaseGraceMs = leaseGraceMs;
    }

    public String instance() {
        return instance;
    }

    /** Spawns the worker of rank pp0/tp{@code tp}; wait for it with {@link SpawnedNode#awaitReady}. */
    public SpawnedNode spawnWorker(int tp) {
        return spawnWorker(tp, new JsonArray(), 4L << 30);
    }

    /**
     * Spawns the worker of rank pp0/tp{@code tp} on a simulated GPU of {@code capacityBytes} whose
     * driver calls follow the fault plan {@code faults} ({@code io.kvpager.sim.FaultPlan#parse}).
     */
    public SpawnedNode spawnWorker(int tp, JsonArray faults, long capacityBytes) {
        SimOptions sim = SimOptions.parse(new JsonObject().put("gpuKey", instance).put("capacityBytes", capacityBytes)
                .put("faults", faults).getMap());
        JsonObject worker = new RankWorkerOptions().setInstance(instance).setPp(0).setTp(tp).setGpu(tp).setSim(sim).setSendTimeoutMs(SEND_TIMEOUT_MS).setLeaseGraceMs(leaseGraceMs).toJson();
        return spawn("tp" + tp, new JsonArray().add(worker), new JsonArray());
    }

    /** Spawns a coordinator of the cache, always with the same options; ready once the tensors exist on both ranks. */
    /**
     * Spawns both workers and the coordinator, waits until each is ready within {@code start}, and
     * allocates {@code pages} pages' worth of blocks.
     *
     * @return the coordinator
     */
    public SpawnedNode spawnServing(Duration start, int pages) {
        SpawnedNode tp0 = spawnWorker(0);
        SpawnedNode tp1 = spawnWorker(1);
        SpawnedNode coordinator = spawnCoordinator();
        tp0.awaitReady(start);
        tp1.awaitReady(start);
        coordinator.awaitReady(start);
        allocPages(pages);
        return coordinator;
    }

    public SpawnedNode spawnCoordinator() {
        return spawn("coordinator", new JsonArray(), new JsonArray().add(options().toJson()));
    }

    /**
     * Spawns a coordinator as {@link #spawnCoordinator()} does, in {@code namespace}: its node binds
     * the namespace's end and joins through the test's node across the veth pair.
     */
    public SpawnedNode spawnCoordinatorIn(NetworkNamespace namespace) {
        // the namespace is the node's alone: the first member port is free there
        ClusterNodeOptions node = new ClusterNodeOptions().setClusterName(here.options().getClusterName())
                .setHost(namespace.innerAddress()).setMemberPort(ClusterNodeOptions.DEFAULT_MEMBER_PORT)
                .setMembers(List.of(here.memberAddress())).setQuorum(here.options().getQuorum());
        SpawnedNode spawnedNode = SpawnedNode.spawn(instance + "-coordinator-" + (++serial),
                TestClusters.spec(node, new JsonArray(), new JsonArray().add(options().toJson())), namespace.launcher(),
                SpawnedNode.SMALL_JVM);
        spawned.add(spawnedNode);
        return spawnedNode;
    }

    /** The cache's options: every coordinator of it, in any process, is started with these. */
    public KvCacheOptions options() {
        return new KvCacheOptions().setInstance(instance).setTp(2).setLayers(2).setKvBuffers(2).setBlockBytes(64 << 10)
                .setPages(16).setReserveLow(0).setReserveHigh(0).setAdaptiveReserve(false).setRefillIntervalMs(5)
                .setSendTimeoutMs(SEND_TIMEOUT_MS).setTensorsDeadlineMs(60_000).setTensorsPollMs(20).setLocalWorkers(false);
    }

    private SpawnedNode spawn(String role, JsonArray workers, JsonArray caches) {
        ClusterNodeOptions options = TestClusters.nodeOptions(here.options().getClusterName(), here.memberAddress(), here.options().getHost())
                .setQuorum(here.options().getQuorum());
        SpawnedNode node = SpawnedNode.spawn(instance + "-" + role + "-" + (++serial), TestClusters.spec(options, workers, caches));
        spawned.add(node);
        return node;
    }

    /** {@code alloc} through the coordinator's address: {@code {"blocks": [...]}} or {@code {"miss": ..., "detail": ...}}. */
    public Future<JsonObject> alloc(int blocks) {
        return toCoordinator("alloc", new JsonObject().put("blocks", blocks), REQUEST_TIMEOUT_MS);
    }

    public Future<JsonObject> free(JsonArray blocks) {
        return toCoordinator("free", new JsonObject().put("blocks", blocks), REQUEST_TIMEOUT_MS);
    }

    /** {@code alloc} that waits for its answer up to {@code timeoutMs}. */
    public Future<JsonObject> alloc(int blocks, long timeoutMs) {
        return toCoordinator("alloc", new JsonObject().put("blocks", blocks), timeoutMs);
    }

    /** {@code free} of blocks that the coordinator incarnation {@code owner} handed out (the alloc's answer names it). */
    public Future<JsonObject> free(JsonArray blocks, String owner, long timeoutMs) {
        return toCoordinator("free", new JsonObject().put("blocks", blocks).put("owner", owner), timeoutMs);
    }

    /** The cache's stats as the coordinator answers them (its ledger's pool, each rank, each GPU). */
    public Future<JsonObject> cacheStats() {
        return toCoordinator("stats", new JsonObject(), REQUEST_TIMEOUT_MS);
    }

    /**
     * The cache's stats as {@code kvpager status} asks them: each rank's within {@code ranksWithinMs},
     * the answer within {@code timeoutMs}.
     */
    public Future<JsonObject> cacheStats(long ranksWithinMs, long timeoutMs) {
        return toCoordinator("stats", new JsonObject().put("ranksWithinMs", ranksWithinMs), timeoutMs);
    }

    private Future<JsonObject> toCoordinator(String action, JsonObject body, long timeoutMs) {
        return here.vertx().eventBus().<JsonObject>request("kvpager." + instance + ".coordinator", body,
                new DeliveryOptions().addHeader("action", action).setSendTimeout(timeoutMs)).map(m -> m.body());
    }

    /** Allocates a page's blocks {@code times} times, one after another, each answered with blocks. */
    public void allocPages(int times) {
        for (int i = 0; i < times; i++) {
            JsonObject answer = TestClusters.await(alloc(BLOCKS_PER_PAGE));
            assertThat(answer.containsKey("blocks")).as(answer.encode()).isTrue();
        }
    }

    /**
     * After the coordinator's process was cut off (paused, partitioned) until {@code since}
     * ({@link System#nanoTime()}): it must say it was displaced, the cluster be whole again
     * ({@code members} nodes), and it serve again as a new owner, the same on both ranks, with
     * ledger, workers and devices agreeing and every GPU's budget counting the pools, each within
     * {@code bound}. Prints {@code "<heading>: one cluster N ms after <event>, first alloc served M ms
     * after it"} and what the coordinator said.
     *
     * @return the new owner
     */
    public String awaitNewOwner(SpawnedNode coordinator, String before, int members, long since, String heading, String event,
            Duration bound) {
        String displaced = coordinator.awaitLine("was displaced", bound);
        Awaitility.await().atMost(bound).pollInterval(Duration.ofMillis(100)).until(() -> here.members() == members);
        long mergedMs = (System.nanoTime() - since) / 1_000_000;
        Duration firstAlloc = untilAllocates(bound);
        long servedMs = (System.nanoTime() - since) / 1_000_000;
        System.out.printf("%s: one cluster %d ms after %s, first alloc served %d ms after it (%d ms of tries)%n", heading, mergedMs,
                event, servedMs, firstAlloc.toMillis());
        System.out.println("coordinator said: " + displaced);
        System.out.println("coordinator said: " + coordinator.awaitLine("back as owner", bound));
        String after = ownerOn(0);
        assertThat(after).isNotNull().isNotEqualTo(before);
        assertThat(ownerOn(1)).isEqualTo(after);
        allocPages(2);
        Awaitility.await().atMost(bound).until(() -> disagreements().isEmpty());
        // the side merged in loses its record to the larger side's, the new owner's claim with it, until
        // the next check of the records (ShareReconcile, every 2 s) puts the claim back
        Awaitility.await().atMost(Duration.ofSeconds(5)).pollInterval(Duration.ofMillis(200)).untilAsserted(this::readyAndCounted);
        return after;
    }

    /** The cache's stats, which must say it is ready and that every GPU's budget counts what the pools hold there. */
    public JsonObject readyAndCounted() {
        JsonObject stats = TestClusters.await(cacheStats());
        assertThat(stats.getString("state")).isEqualTo("ready");
        budgetCoversThePools(stats);
        return stats;
    }

    /** On every GPU the budget record counts at least what the pool holds there, and no more than the GPU. */
    public static void budgetCoversThePools(JsonObject stats) {
        JsonArray gpus = stats.getJsonArray("gpus");
        assertThat(gpus).isNotEmpty();
        for (int i = 0; i < gpus.size(); i++) {
            JsonObject gpu = gpus.getJsonObject(i);
            assertThat(gpu.getLong("takenBytes")).as("taken >= held on %s", gpu.encode()).isGreaterThanOrEqualTo(gpu.getLong("heldBytes"));
            assertThat(gpu.getLong("takenBytes")).as("taken <= capacity on %s", gpu.encode()).isLessThanOrEqualTo(gpu.getLong("capacityBytes"));
        }
    }

    /**
     * Waits up to {@code bound} until every GPU's budget record counts exactly what the pool holds
     * there (taken = held: one share for the cache, no claim of an incarnation before it, no lease
     * surplus left once it is idle); prints how long that took.
     */
    public void awaitTakenIsHeld(String heading, Duration bound) {
        long started = System.nanoTime();
        JsonObject[] last = new JsonObject[1];
        try {
            Awaitility.await().atMost(bound).pollDelay(Duration.ZERO).pollInterval(Duration.ofMillis(100)).until(() -> {
                JsonObject stats = TestClusters.await(cacheStats());
                last[0] = stats;
                JsonArray gpus = stats.getJsonArray("gpus");
                boolean equal = !gpus.isEmpty();
                for (int i = 0; i < gpus.size(); i++) {
                    JsonObject gpu = gpus.getJsonObject(i);
                    equal &= gpu.getLong("takenBytes").equals(gpu.getLong("heldBytes"));
                }
                return equal;
            });
        } catch (org.awaitility.core.ConditionTimeoutException e) {
            throw new AssertionError("taken != held on some GPU " + bound + " after the cache served; last stats: "
                    + (last[0] == null ? null : last[0].getJsonArray("gpus").encode()), e);
        }
        System.out.printf("%s: taken = held on every GPU %d ms after the check began%n", heading, (System.nanoTime() - started) / 1_000_000);
    }

    /** A map of page 15 sent to rank pp0/tp{@code tp} by the owner before, {@code former}: the worker must refuse it (409). */
    public void assertMapOfFormerOwnerRefused(String former, int tp) {
        JsonObject stale = new JsonObject().put("pp", 0).put("tp", tp).put("group", 0).put("owner", Owner.parse(former).toString())
                .put("pages", new JsonArray().add(15)).put("requestId", "stale-" + tp);
        Throwable refused = here.vertx().eventBus().request(RankWorker.address(instance, 0, tp), stale,
                new DeliveryOptions().addHeader("action", "map").setSendTimeout(REQUEST_TIMEOUT_MS))
                .transform(ar -> Future.succeededFuture(ar.cause())).await();
        assertThat(refused).isInstanceOf(ReplyException.class);
        assertThat(((ReplyException) refused).failureCode()).isEqualTo(FailureCode.CONFLICT.code());
    }

    /** The owner of group 0 on rank {@code tp}, as its worker names it; null when the rank has no such group. */
    public String ownerOn(int tp) {
        JsonObject group = workerStats(tp).getJsonObject("groups").getJsonObject("0");
        return group == null ? null : group.getString("owner");
    }

    /** Rank pp0/tp{@code tp}'s own stats, asked straight from its worker. */
    public JsonObject workerStats(int tp) {
        return TestClusters.await(here.vertx().eventBus().<JsonObject>request(RankWorker.address(instance, 0, tp), new JsonObject(),
                new DeliveryOptions().addHeader("action", "stats").setSendTimeout(REQUEST_TIMEOUT_MS)).map(m -> m.body()));
    }

    /** Whether rank {@code tp} holds nothing: no group, no handle, no device memory in use. */
    public boolean released(int tp) {
        JsonObject stats = workerStats(tp);
        return stats.getJsonObject("groups").isEmpty() && stats.getInteger("handlesAlive") == 0
                && stats.getLong("deviceUsedBytes") == 0L;
    }

    /**
     * Where the coordinator's ledger, the ranks' stats and their devices disagree: each rank must
     * hold exactly the ledger's mapped pages, with one handle each, and its device's memory in use
     * must be those handles plus its pooled ones. Empty when they agree.
     */
    public List<String> disagreements() {
        JsonObject cache = TestClusters.await(cacheStats());
        long ledgerPages = cache.getJsonObject("pool").getLong("mappedPages");
        List<String> found = new ArrayList<>();
        for (int tp = 0; tp < 2; tp++) {
            JsonObject worker = workerStats(tp);
            JsonObject group = worker.getJsonObject("groups").getJsonObject("0", new JsonObject());
            long mapped = group.getLong("mappedPages", -1L);
            long used = worker.getLong("deviceUsedBytes");
            long expected = mapped * PAGE_ID_BYTES + worker.getLong("pooledBytes");
            if (mapped != ledgerPages) {
                found.add("pp0/tp" + tp + " holds " + mapped + " mapped pages, the ledger " + ledgerPages);
            }
            if (used != expected) {
                found.add("pp0/tp" + tp + "'s device has " + used + " bytes in use, its mapped and pooled handles " + expected);
            }
            if (group.getLong("handles", -1L) != mapped) {
                found.add("pp0/tp" + tp + " holds " + group.getLong("handles") + " handles for " + mapped + " mapped pages");
            }
        }
        JsonArray ranks = cache.getJsonArray("ranks");
        for (int i = 0; i < ranks.size(); i++) {
            JsonObject rank = ranks.getJsonObject(i);
            if (!rank.getBoolean("up") || rank.getLong("mappedPages") != ledgerPages) {
                found.add("the cache's stats say " + rank.encode() + " with " + ledgerPages + " pages in the ledger");
            }
        }
        return found;
    }

    /**
     * Asks for one page id's blocks every 10 ms until an allocation succeeds, at most {@code bound},
     * and frees them again; the time until the allocation was served. Call it once a coordinator
     * is ready: a request to one that just died waits for the request timeout.
     */
    public Duration untilAllocates(Duration bound) {
        long started = System.nanoTime();
        JsonObject[] served = new JsonObject[1];
        Throwable[] failed = new Throwable[1];
        try {
            Awaitility.await().atMost(bound).pollDelay(Duration.ZERO).pollInterval(Duration.ofMillis(10)).until(() -> {
                // every try waits for its answer: one given up on would leave its blocks allocated
                JsonObject answer = alloc(BLOCKS_PER_PAGE).onFailure(e -> failed[0] = e).otherwiseEmpty().await();
                served[0] = answer;
                return answer != null && answer.containsKey("blocks");
            });
        } catch (org.awaitility.core.ConditionTimeoutException e) {
            throw new AssertionError("no allocation served within " + bound + "; the last answer: "
                    + (served[0] != null ? served[0].encode() : String.valueOf(failed[0])), e);
        }
        Duration took = Duration.ofNanos(System.nanoTime() - started);
        TestClusters.await(free(served[0].getJsonArray("blocks")));
        return took;
    }

    /** How many lines that contain {@code text} every node spawned so far has written. */
    public long linesWith(String text) {
        return spawned.stream().mapToLong(node -> node.lines().stream().filter(line -> line.contains(text)).count()).sum();
    }

    @Override
    public void close() {
        spawned.forEach(SpawnedNode::close);
    }
}
