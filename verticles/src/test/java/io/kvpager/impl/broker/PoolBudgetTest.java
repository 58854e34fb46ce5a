package io.kvpager.impl.broker;

import io.kvpager.cache.KvCacheOptions;
import io.kvpager.protocol.CreateTensorsReply;

import io.kvpager.MissReason;
import io.kvpager.core.PageMapFailure;
import io.kvpager.protocol.RankTarget;
import io.kvpager.protocol.RankTarget;
import io.kvpager.protocol.Owner;
import io.vertx.core.Context;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.Vertx;
import io.vertx.junit5.VertxExtension;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicLong;

import static io.kvpager.cache.SimPool.await;
import static io.kvpager.impl.broker.GpuBrokerTest.on;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * Pools drawing on one GPU through their leases ({@link PoolBudget} over {@link GpuLease}), on a
 * Vert.x that is not clustered: each pool on an event loop of its own, as each coordinator is.
 */
@ExtendWith(VertxExtension.class)
class PoolBudgetTest {

    private static final long PAGE = 8L << 20;
    private static final int GPU_PAGES = 64;

    /** A pool with one rank on {@code gpu}, opened on a context of its own. */
    private record Pool(Context context, PoolBudget budget, Owner owner) {
        /** A pool without a guarantee (first-come): what these tests look at is the leases and their surplus. */
        static Pool open(Vertx vertx, String gpu, String name, Owner owner) {
            Context context = vertx.getOrCreateContext();
            CreateTensorsReply created = new CreateTensorsReply(0, 2L << 20, gpu, GPU_PAGES * PAGE, 0, null);
            PoolBudget budget = on(context, () -> {
                PoolBudget b = new PoolBudget(vertx, name, name, owner, PAGE, Guarantee.ofPercent(0),
                        KvCacheOptions.DEFAULT_RECLAIM_DEADLINE_MS);
                return b.open(Map.of(new RankTarget(0, 0), created)).map(b);
            });
            return new Pool(context, budget, owner);
        }

        boolean take(int pages) {
            Promise<Boolean> taken = Promise.promise();
            context.runOnContext(v -> budget.take(pages).onComplete(ar -> taken.complete(ar.succeeded())));
            return await(taken.future());
        }

        void give(int pages) {
            on(context, () -> budget.give(pages));
        }

        GpuLease lease() {
            return on(context, () -> Future.succeededFuture(budget.leases().getFirst()));
        }
    }

    private static GpuBroker reader(Vertx vertx, String gpu) {
        return await(GpuBroker.open(vertx, gpu, GPU_PAGES * PAGE));
    }

    @Test
    void poolsOnSeveralEventLoopsNeverHoldMoreThanTheGpuAndTheirLeasesAddUpToTheShares(Vertx vertx) {
        String gpu = "gpu-concurrent";
        AtomicLong held = new AtomicLong();
        ConcurrentLinkedQueue<String> overCommits = new ConcurrentLinkedQueue<>();
        List<Pool> pools = new ArrayList<>();
        List<Future<Integer>> runs = new ArrayList<>();
        for (int p = 0; p < 4; p++) {
            Pool pool = Pool.open(vertx, gpu, "pool-" + p, new Owner("node-" + p, 1));
            pools.add(pool);
            Promise<Integer> refusals = Promise.promise();
            runs.add(refusals.future());
            Random random = new Random(1234L + p);
            pool.context().runOnContext(v -> randomRun(pool.budget(), random, 400, new ArrayDeque<>(), held, overCommits, 0)
                    .onComplete(refusals));
        }
        await(Future.all(runs).timeout(60, java.util.concurrent.TimeUnit.SECONDS));
        assertThat(overCommits).isEmpty();
        assertThat(runs).as("refusals per pool: the pools did contend").anySatisfy(r -> assertThat(r.result()).isPositive());

        GpuShares shares = await(reader(vertx, gpu).shares());
        long leased = 0;
        for (Pool pool : pools) {
            GpuLease lease = pool.lease();
            assertThat(lease.leased()).isGreaterThanOrEqualTo(lease.held());
            assertThat(shares.of("pool-" + pools.indexOf(pool)).bytes())
                    .as("the shared share of pool-%d", pools.indexOf(pool)).isGreaterThanOrEqualTo(lease.leased());
            leased += lease.leased();
        }
        assertThat(shares.total()).isLessThanOrEqualTo(GPU_PAGES * PAGE).isGreaterThanOrEqualTo(held.get());
        for (Pool pool : pools) {
            on(pool.context(), () -> pool.budget().close());
        }
        assertThat(await(reader(vertx, gpu).taken())).isZero();
        assertThat(leased).isGreaterThanOrEqualTo(held.get());
    }

    /** Takes of 1 to 8 pages and gives of what it holds, at random; counts the takes refused. */
    private static Future<Integer> randomRun(PoolBudget budget, Random random, int steps, Deque<Integer> taken, AtomicLong held,
                                             ConcurrentLinkedQueue<String> overCommits, int refusals) {
        if (steps == 0) {
            int pages = taken.stream().mapToInt(Integer::intValue).sum();
            held.addAndGet(-pages * PAGE);
            return budget.give(pages).map(refusals);
        }
        if (!taken.isEmpty() && random.nextInt(3) == 0) {
            int pages = random.nextBoolean() ? taken.pollFirst() : taken.pollLast();
            held.addAndGet(-pages * PAGE);
            return budget.give(pages).compose(v -> randomRun(budget, random, steps - 1, taken, held, overCommits, refusals));
        }
        int pages = 1 + random.nextInt(8);
        return budget.take(pages).transform(ar -> {
            if (ar.succeeded()) {
                taken.add(pages);
                long now = held.addAndGet(pages * PAGE);
                if (now > GPU_PAGES * PAGE) {
                    overCommits.add("held " + now + " bytes of " + GPU_PAGES * PAGE);
                }
            } else if (!(ar.cause() instanceof PageMapFailure f && f.reason() == MissReason.GPU_SHARE)) {
                return Future.failedFuture(ar.cause());
            }
            return randomRun(budget, random, steps - 1, taken, held, overCommits, refusals + (ar.succeeded() ? 0 : 1));
        });
    }

    @Test
    void mostTakesFitInTheLeaseAndNeverReachTheBroker(Vertx vertx) {
        Pool pool = Pool.open(vertx, "gpu-lease", "steady", new Owner("node-s", 1));
        for (int i = 0; i < 200; i++) {
            assertThat(pool.take(4)).isTrue();
            pool.give(4);
        }
        assertThat(pool.lease().brokerCalls()).as("takes that reached the broker, of 200").isLessThanOrEqualTo(2);
        assertThat(pool.lease().held()).isZero();
        // idle, the lease goes back
        await().atMost(Duration.ofSeconds(5)).until(() -> await(reader(vertx, "gpu-lease").taken()) == 0);
    }

    @Test
    void aPoolsIdleSurplusNeverCostsAnotherPoolItsMemory(Vertx vertx) {
        Pool first = Pool.open(vertx, "gpu-recall", "first", new Owner("node-f", 1));
        Pool second = Pool.open(vertx, "gpu-recall", "second", new Owner("node-g", 1));
        for (int i = 0; i < 8; i++) {
            assertThat(first.take(1)).isTrue();
        }
        GpuLease lease = first.lease();
        assertThat(lease.leased()).as("a surplus above the 8 pages held").isGreaterThan(8 * PAGE);
        // everything the first does not hold
        assertThat(second.take(GPU_PAGES - 8)).isTrue();
        assertThat(first.lease().leased()).isEqualTo(8 * PAGE);
        assertThat(await(reader(vertx, "gpu-recall").taken())).isEqualTo(GPU_PAGES * PAGE);
        // and not one page more
        assertThat(second.take(1)).isFalse();
        assertThat(first.take(1)).isFalse();
    }

    @Test
    void aPoolWhoseShareANewOwnerClaimedCanTakeNoMoreAndGivesNothingOfTheNewOwners(Vertx vertx) {
        Pool old = Pool.open(vertx, "gpu-owner", "llama.group0", new Owner("node-o", 1));
        assertThat(old.take(4)).isTrue();
        Pool restarted = Pool.open(vertx, "gpu-owner", "llama.group0", new Owner("node-o", 2));
        assertThat(restarted.take(2)).isTrue();
        Promise<Throwable> refused = Promise.promise();
        old.context().runOnContext(v -> old.budget().take(GPU_PAGES).onComplete(ar -> refused.complete(ar.cause())));
        assertThat(await(refused.future())).isInstanceOf(PageMapFailure.class).hasMessageContaining("belongs to owner node-o#2 now")
                .extracting(e -> ((PageMapFailure) e).reason()).isEqualTo(MissReason.MAP_FAILED);
        old.give(4);
        on(old.context(), () -> old.budget().close());
        GpuShares shares = await(reader(vertx, "gpu-owner").shares());
        assertThat(shares.shares()).containsOnlyKeys("llama.group0");
        assertThat(shares.of("llama.group0").owner()).isEqualTo(restarted.owner());
        assertThat(shares.of("llama.group0").bytes()).isGreaterThanOrEqualTo(2 * PAGE);
    }
}
