package io.kvpager.impl.broker;

import java.math.BigInteger;
import java.util.ArrayList;
import java.util.Collections;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The sharing policy of one GPU, as pure decisions on its {@link GpuShares}: what each pool is
 * guaranteed, how far a pool may grow, and whom to ask for memory when a pool below its guarantee
 * is refused. It holds no state and reads no clock; the broker applies it to the shares it just
 * read, the pools' budgets carry out what it decides.
 *
 * <ul>
 * <li>Each pool's guarantee: what it asked in bytes, or in percent of the GPU's capacity; the pools
 *     that asked neither split what those leave equally (recomputed as pools come and go). Asks
 *     that add up to more than the capacity are scaled down to it, so the guarantees never do.</li>
 * <li>A pool borrows beyond its guarantee whatever memory is free, unless it is capped (it missed a
 *     reclaim's deadline; until its share is back within its guarantee), restrained (it is giving
 *     back now), or another pool waits for memory reclaimed for it: then it grows no further than
 *     its guarantee. Nothing is kept free for the pools below their guarantees: measured, memory
 *     kept free for their next burst sat idle while the borrowers' requests waited for it
 *     (docs/sharing.md).</li>
 * <li>A pool refused a take that would keep it within its guarantee reclaims the shortfall from
 *     the pools above theirs, largest excess first, never asking one for more than its excess: a
 *     pool at or below its guarantee is never asked.</li>
 * </ul>
 */
public final class ShareArbiter {

    /**
     * A reclaim asks, beyond the bytes the refused take needs, for {@code 1 / AHEAD_DIVISOR} of what
     * is left between the take and the pool's guarantee ({@link #plan}).
     */
    static final long AHEAD_DIVISOR = 2;

    private ShareArbiter() {
    }

    /** Each pool's guaranteed bytes, in the shares' order; they add up to at most {@code capacity}. */
    public static Map<String, Long> guarantees(GpuShares shares, long capacity) {
        Map<String, Long> out = new LinkedHashMap<>();
        long fixed = 0;
        int split = 0;
        for (GpuShares.Share share : shares.shares().values()) {
            long asked = share.guarantee().fixedOf(capacity);
            if (asked < 0) {
                split++;
            } else {
                fixed = saturatingAdd(fixed, asked);
            }
        }
        long leftForSplit = Math.max(0, capacity - fixed);
        for (Map.Entry<String, GpuShares.Share> e : shares.shares().entrySet()) {
            long asked = e.getValue().guarantee().fixedOf(capacity);
            long g;
            if (asked < 0) {
                g = leftForSplit / split;
            } else if (fixed > capacity) {
                g = BigInteger.valueOf(asked).multiply(BigInteger.valueOf(capacity)).divide(BigInteger.valueOf(fixed)).longValueExact();
            } else {
                g = asked;
            }
            out.put(e.getKey(), g);
        }
        return out;
    }

    /** {@code pool}'s guaranteed bytes; 0 for a pool without a share. */
    public static long guarantee(GpuShares shares, long capacity, String pool) {
        Long g = guarantees(shares, capacity).get(pool);
        return g == null ? 0 : g;
    }

    /**
     * Whether {@code pool} may join (or stay) asking {@code ask}: the bytes and percents asked by every
     * pool, this one's included, fit in the capacity. Names what does not fit otherwise.
     *
     * @return {@code null} when it fits, else why not
     */
    public static String refusesAsk(GpuShares shares, long capacity, String pool, Guarantee ask) {
        long asked = ask.fixedOf(capacity);
        if (asked < 0) {
            return null;
        }
        long others = 0;
        for (Map.Entry<String, GpuShares.Share> e : shares.shares().entrySet()) {
            if (!e.getKey().equals(pool)) {
                others = saturatingAdd(others, Math.max(0, e.getValue().guarantee().fixedOf(capacity)));
            }
        }
        if (saturatingAdd(others, asked) <= capacity) {
            return null;
        }
        return "a guarantee of " + ask + " (" + asked + " bytes) does not fit: the other pools on it are guaranteed "
                + others + " of its " + capacity + " bytes";
    }

    /**
     * The largest share {@code pool} may grow to at {@code nowMs}: what the others leave free, and no
     * more than its guarantee while it is capped or {@code restrained}, or while another pool waits
     * for memory reclaimed for it (so no borrower takes what comes back). Never below its present
     * share, which it may always keep or shrink.
     */
    public static long most(GpuShares shares, long capacity, String pool, boolean restrained, long nowMs) {
        GpuShares.Share own = shares.of(pool);
        long held = own == null ? 0 : own.bytes();
        long free = capacity - shares.others(pool);
        long g = guarantees(shares, capacity).getOrDefault(pool, 0L);
        // within its guarantee or beyond it, a pool takes whatever is free
        long most = free;
        if (restrained || (own != null && own.capped()) || othersWait(shares, pool, nowMs)) {
            most = Math.min(most, g);
        }
        return Math.max(most, Math.min(held, free));
    }

    private static boolean othersWait(GpuShares shares, String pool, long nowMs) {
        for (Map.Entry<String, GpuShares.Share> e : shares.shares().entrySet()) {
            if (!e.getKey().equals(pool) && e.getValue().waiting(nowMs)) {
                return true;
            }
        }
        return false;
    }

    /** These shares with {@code pool} waiting for reclaimed memory until {@code untilMs} (0: not waiting). */
    static GpuShares waiting(GpuShares shares, String pool, long untilMs) {
        GpuShares.Share own = shares.of(pool);
        return own == null || own.waitingUntilMs() == untilMs ? shares : shares.with(pool, own.waitingUntil(untilMs));
    }

    /**
     * After {@code pool}'s share became {@code bytes}: its cap is lifted once the share is within its
     * guarantee.
     */
    static GpuShares settle(GpuShares shares, long capacity, String pool) {
        GpuShares.Share own = shares.of(pool);
        if (own == null || !own.capped() || own.bytes() > guarantee(shares, capacity, pool)) {
            return shares;
        }
        return shares.with(pool, own.withCapped(false));
    }

    /** These shares with {@code pool} capped at its guarantee; unchanged when it holds no share. */
    static GpuShares cap(GpuShares shares, String pool) {
        GpuShares.Share own = shares.of(pool);
        if (own == null || own.capped()) {
            return shares;
        }
        return shares.with(pool, own.withCapped(true));
    }

    /**
     * Whom to ask, and for how much, so that {@code pool}'s share can become {@code target} bytes:
     * the shortfall, plus half of what then remains up to the pool's guarantee as far as the pools
     * above theirs hold it (one reclaim per burst rather than one per page), largest excess first.
     *
     * @param target the share the pool needs, what it holds and what it was refused
     */
    public static Plan plan(GpuShares shares, long capacity, String pool, long target) {
        long free = capacity - shares.others(pool);
        if (target <= free) {
            return new Plan(0, Map.of(), null);
        }
        long needed = target - free;
        Map<String, Long> guarantees = guarantees(shares, capacity);
        long g = guarantees.getOrDefault(pool, 0L);
        if (target > g) {
            return new Plan(needed, Map.of(), "it would take its share to " + target + " bytes, above its guarantee of "
                    + g + ", and the other pools leave " + free + " bytes");
        }
        List<Map.Entry<String, Long>> above = new ArrayList<>();
        long excessAbove = 0;
        for (Map.Entry<String, GpuShares.Share> e : shares.shares().entrySet()) {
            long excess = e.getValue().bytes() - guarantees.get(e.getKey());
            if (!e.getKey().equals(pool) && excess > 0) {
                above.add(Map.entry(e.getKey(), excess));
                excessAbove += excess;
            }
        }
        // Hysteresis: a pool refused below its guarantee is growing (a burst), and a reclaim per page
        // would preempt the borrowers again at every page: ask at once for half of what is left
        // between the take and the guarantee too, as far as the borrowers' excess goes.
        long shortfall = Math.max(needed, Math.min(needed + (g - target) / AHEAD_DIVISOR, excessAbove));
        above.sort(Comparator.<Map.Entry<String, Long>>comparingLong(Map.Entry::getValue).reversed().thenComparing(Map.Entry::getKey));
        Map<String, Long> asks = new LinkedHashMap<>();
        long left = shortfall;
        for (Map.Entry<String, Long> e : above) {
            if (left == 0) {
                break;
            }
            long ask = Math.min(left, e.getValue());
            asks.put(e.getKey(), ask);
            left -= ask;
        }
        if (left > 0) {
            return new Plan(needed, Map.of(), "it is " + needed + " bytes short within its guarantee of " + g
                    + " bytes, and the pools above their guarantees hold only " + excessAbove + " bytes above them");
        }
        return new Plan(shortfall, asks, null);
    }

    /**
     * Whether {@code pool}, asked for {@code asked} bytes when its share was {@code before}, has given
     * them back (or is within its guarantee, or gone): one that has not by its deadline is capped.
     */
    public static boolean gaveBack(GpuShares shares, long capacity, String pool, long before, long asked) {
        GpuShares.Share own = shares.of(pool);
        return own == null || own.bytes() <= before - asked || own.bytes() <= guarantee(shares, capacity, pool);
    }

    /**
     * A reclaim's plan: the bytes the pool is short of, each pool asked and how many bytes; or why
     * nothing can be reclaimed for it.
     *
     * @param shortfall bytes asked of the pools above their guarantees: what the take needs beyond
     *     what the others leave free, plus part of what is left toward the pool's guarantee; 0 when the take fits
     * @param asks pool to the bytes it is asked to give back, largest excess first
     * @param refusal why the take cannot be served by reclaiming, or {@code null}
     */
    public record Plan(long shortfall, Map<String, Long> asks, String refusal) {
        public Plan {
            asks = Collections.unmodifiableMap(new LinkedHashMap<>(asks));
        }

        public boolean feasible() {
            return refusal == null;
        }
    }

    private static long saturatingAdd(long a, long b) {
        long sum = a + b;
        return ((a ^ sum) & (b ^ sum)) < 0 ? Long.MAX_VALUE : sum;
    }
}
