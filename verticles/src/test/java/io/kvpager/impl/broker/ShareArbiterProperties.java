package io.kvpager.impl.broker;

import io.kvpager.protocol.Owner;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Combinators;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.statistics.Statistics;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.PriorityQueue;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The sharing policy over random demand on one GPU, on a virtual clock: several pools with random
 * guarantees allocate and free at random; a pool refused within its guarantee reclaims as
 * {@link ShareArbiter#plan} says and waits up to the deadline; the pools asked give back after a
 * random delay within the deadline, or never. Every step keeps the grants within the capacity and
 * the guarantees within it; a borrower leaves free a quarter of the others' unused guarantees;
 * nobody at or below its guarantee is asked; a capped pool never grows
 * above its guarantee; no pool above its guarantee grows while another waits; and a pool whose
 * reclaim every pool asked honoured is served by the deadline, unless a pool within its own
 * guarantee took the memory first.
 */
class ShareArbiterProperties {

    private static final long DEADLINE_MS = 100;

    /** One pool: what it asks, and how its engine answers a reclaim (-1: never). */
    record PoolSpec(Guarantee ask, long giveBackAfterMs) {
    }

    /** One step of demand: an allocation or a free (a fraction of what the pool holds) by a pool, then time passing. */
    record Step(int pool, boolean alloc, long amount, long thenMs) {
    }

    @Provide
    Arbitrary<List<PoolSpec>> pools() {
        Arbitrary<Guarantee> ask = Arbitraries.oneOf(Arbitraries.just(Guarantee.SPLIT),
                Arbitraries.longs().between(0, 600).map(Guarantee::ofBytes),
                Arbitraries.integers().between(0, 60).map(Guarantee::ofPercent));
        Arbitrary<Long> answer = Arbitraries.oneOf(Arbitraries.longs().between(0, DEADLINE_MS), Arbitraries.just(-1L));
        return Combinators.combine(ask, answer).as(PoolSpec::new).list().ofMinSize(2).ofMaxSize(4);
    }

    @Provide
    Arbitrary<List<Step>> steps() {
        return Combinators.combine(Arbitraries.integers().between(0, 3), Arbitraries.of(true, true, false),
                Arbitraries.longs().between(1, 400), Arbitraries.longs().between(0, 60)).as(Step::new).list().ofMaxSize(120);
    }

    @Property(tries = 1000)
    void guaranteesHoldAndNobodyIsOverGrantedOrStarvedPastTheDeadline(@ForAll("pools") List<PoolSpec> specs,
                                                                      @ForAll("steps") List<Step> steps,
                                                                      @ForAll("capacities") long capacity) {
        Gpu gpu = new Gpu(specs, capacity);
        gpu.run(steps);
        Statistics.label("served after a reclaim").collect(gpu.servedAfterReclaim > 0);
        Statistics.label("capped").collect(gpu.capped > 0);
        Statistics.label("borrowed").collect(gpu.borrowed > 0);
        Statistics.label("borrowed").coverage(c -> c.check(true).percentage(p -> p > 10));
        Statistics.label("served after a reclaim").coverage(c -> c.check(true).percentage(p -> p > 3));
        Statistics.label("capped").coverage(c -> c.check(true).percentage(p -> p > 1));
    }

    @Provide
    Arbitrary<Long> capacities() {
        return Arbitraries.longs().between(100, 2_000);
    }

    /** The model of one GPU and its pools, driven by the arbiter. */
    private static final class Gpu {
        private final long capacity;
        private final List<String> names = new ArrayList<>();
        private final List<PoolSpec> specs = new ArrayList<>();
        private GpuShares shares = GpuShares.NONE;
        private long now;
        int servedAfterReclaim;
        int capped;
        int borrowed;
        private final Map<String, Long> restrainedUntil = new HashMap<>();
        private final Map<String, Wait> waits = new HashMap<>();
        /** Give-backs due: at, pool, bytes. */
        private final PriorityQueue<long[]> due = new PriorityQueue<>((a, b) -> Long.compare(a[0], b[0]));

        /** A pool's pending reclaim: what it needs, since when, whom it asked. */
        private static final class Wait {
            final long bytes;
            final long since;
            final Map<String, Long> asked;
            final Map<String, Long> before = new HashMap<>();
            boolean entitledGrowth;

            Wait(long bytes, long since, Map<String, Long> asked) {
                this.bytes = bytes;
                this.since = since;
                this.asked = asked;
            }
        }

        Gpu(List<PoolSpec> all, long capacity) {
            this.capacity = capacity;
            for (int i = 0; i < all.size(); i++) {
                String name = "p" + i;
                Guarantee ask = all.get(i).ask();
                String refused = ShareArbiter.refusesAsk(shares, capacity, name, ask);
                if (refused != null) {
                    assertThat(fixedSum(shares) + ask.fixedOf(capacity)).isGreaterThan(capacity);
                    ask = Guarantee.SPLIT; // the cache would not start with it; it starts asking none
                }
                names.add(name);
                specs.add(all.get(i));
                shares = shares.with(name, new GpuShares.Share(new Owner("node-" + i, 1), 0, ask, false));
                assertThat(ShareArbiter.refusesAsk(shares, capacity, name, ask)).isNull();
            }
        }

        private long fixedSum(GpuShares s) {
            long sum = 0;
            for (GpuShares.Share share : s.shares().values()) {
                sum += Math.max(0, share.guarantee().fixedOf(capacity));
            }
            return sum;
        }

        void run(List<Step> steps) {
            for (Step step : steps) {
                if (step.pool() >= names.size()) {
                    continue;
                }
                String pool = names.get(step.pool());
                if (step.alloc()) {
                    alloc(pool, step.amount());
                } else {
                    long held = shares.of(pool).bytes();
                    setShare(pool, held - held * Math.min(step.amount(), 100) / 100);
                }
                invariants();
                advance(step.thenMs());
            }
            advance(3 * DEADLINE_MS);
            assertThat(waits).isEmpty();
        }

        private long guarantee(String pool) {
            return ShareArbiter.guarantee(shares, capacity, pool);
        }

        private boolean restrained(String pool) {
            return restrainedUntil.getOrDefault(pool, Long.MIN_VALUE) > now;
        }

        /** Grants when the arbiter lets the pool grow that far. */
        private boolean tryGrow(String pool, long bytes) {
            long held = shares.of(pool).bytes();
            if (held + bytes > ShareArbiter.most(shares, capacity, pool, restrained(pool), now)) {
                return false;
            }
            boolean cappedBefore = shares.of(pool).capped();
            boolean othersWaiting = false;
            for (Map.Entry<String, Wait> w : waits.entrySet()) {
                if (!w.getKey().equals(pool)) {
                    othersWaiting = true;
                    // while another pool waits, growth is only ever within one's guarantee
                    assertThat(held + bytes).as("%s grows while %s waits", pool, w.getKey()).isLessThanOrEqualTo(guarantee(pool));
                    w.getValue().entitledGrowth = true;
                }
            }
            if (cappedBefore || restrained(pool)) {
                assertThat(held + bytes).as("capped or restrained %s grows", pool).isLessThanOrEqualTo(guarantee(pool));
            }
            assertThat(othersWaiting || cappedBefore || restrained(pool) || held + bytes <= capacity - shares.others(pool)).isTrue();
            if (held + bytes > guarantee(pool)) {
                borrowed++;
            }
            setShare(pool, held + bytes);
            return true;
        }

        private void alloc(String pool, long bytes) {
            if (waits.containsKey(pool) || tryGrow(pool, bytes)) {
                return;
            }
            long held = shares.of(pool).bytes();
            ShareArbiter.Plan plan = ShareArbiter.plan(shares, capacity, pool, held + bytes);
            Map<String, Long> g = ShareArbiter.guarantees(shares, capacity);
            long asked = 0;
            for (Map.Entry<String, Long> ask : plan.asks().entrySet()) {
                long excess = shares.of(ask.getKey()).bytes() - g.get(ask.getKey());
                assertThat(ask.getKey()).isNotEqualTo(pool);
                assertThat(excess).as("a pool at or below its guarantee is never asked").isPositive();
                assertThat(ask.getValue()).isPositive().isLessThanOrEqualTo(excess);
                asked += ask.getValue();
            }
            if (!plan.feasible()) {
                assertThat(plan.asks()).isEmpty();
                assertThat(held + bytes).as("a take within the guarantee can always reclaim").isGreaterThan(g.get(pool));
                return;
            }
            if (plan.asks().isEmpty()) {
                return; // the room is there, but held for another pool's wait or past a cap
            }
            assertThat(held + bytes).isLessThanOrEqualTo(g.get(pool));
            assertThat(asked).isEqualTo(plan.shortfall());
            Wait wait = new Wait(bytes, now, plan.asks());
            waits.put(pool, wait);
            shares = ShareArbiter.waiting(shares, pool, now + DEADLINE_MS);
            for (Map.Entry<String, Long> ask : plan.asks().entrySet()) {
                String victim = ask.getKey();
                wait.before.put(victim, shares.of(victim).bytes());
                restrainedUntil.merge(victim, now + DEADLINE_MS, Math::max);
                long after = specs.get(names.indexOf(victim)).giveBackAfterMs();
                if (after >= 0) {
                    due.add(new long[] {now + after, names.indexOf(victim), ask.getValue()});
                }
            }
        }

        private void setShare(String pool, long bytes) {
            GpuShares.Share own = shares.of(pool);
            shares = ShareArbiter.settle(shares.with(pool, own.withBytes(bytes)), capacity, pool);
            if (bytes > own.bytes()) {
                shares = ShareArbiter.waiting(shares, pool, 0);
            }
        }

        private void advance(long ms) {
            long end = now + ms;
            while (true) {
                long next = end;
                if (!due.isEmpty()) {
                    next = Math.min(next, due.peek()[0]);
                }
                for (Wait w : waits.values()) {
                    next = Math.min(next, w.since + DEADLINE_MS);
                }
                now = Math.max(now, next);
                while (!due.isEmpty() && due.peek()[0] <= now) {
                    long[] give = due.poll();
                    String victim = names.get((int) give[1]);
                    long held = shares.of(victim).bytes();
                    setShare(victim, held - Math.min(held, give[2]));
                }
                serveWaits();
                invariants();
                if (now >= end && (due.isEmpty() || due.peek()[0] > end) && waits.values().stream().allMatch(w -> w.since + DEADLINE_MS > end)) {
                    return;
                }
            }
        }

        private void serveWaits() {
            for (String pool : List.copyOf(waits.keySet())) {
                Wait wait = waits.get(pool);
                if (tryGrow(pool, wait.bytes)) {
                    assertThat(now - wait.since).as("served within the deadline").isLessThanOrEqualTo(DEADLINE_MS);
                    servedAfterReclaim++;
                    waits.remove(pool);
                } else if (now >= wait.since + DEADLINE_MS) {
                    boolean allHonoured = true;
                    for (Map.Entry<String, Long> ask : wait.asked.entrySet()) {
                        String victim = ask.getKey();
                        if (!ShareArbiter.gaveBack(shares, capacity, victim, wait.before.get(victim), ask.getValue())) {
                            shares = ShareArbiter.cap(shares, victim);
                            capped++;
                            allHonoured = false;
                        }
                        if (specs.get(names.indexOf(victim)).giveBackAfterMs() < 0) {
                            allHonoured = false;
                        }
                    }
                    if (allHonoured) {
                        assertThat(wait.entitledGrowth).as("%s starved past the deadline though every pool asked gave back", pool)
                                .isTrue();
                    }
                    waits.remove(pool);
                    shares = ShareArbiter.waiting(shares, pool, 0);
                }
            }
        }

        private void invariants() {
            assertThat(shares.total()).as("grants within the capacity").isLessThanOrEqualTo(capacity);
            long guaranteed = 0;
            for (long g : ShareArbiter.guarantees(shares, capacity).values()) {
                assertThat(g).isNotNegative();
                guaranteed += g;
            }
            assertThat(guaranteed).as("guarantees within the capacity").isLessThanOrEqualTo(capacity);
            for (Map.Entry<String, GpuShares.Share> e : shares.shares().entrySet()) {
                if (e.getValue().capped()) {
                    assertThat(e.getValue().bytes()).as("a capped pool is above its guarantee").isGreaterThan(guarantee(e.getKey()));
                }
            }
        }
    }
}
