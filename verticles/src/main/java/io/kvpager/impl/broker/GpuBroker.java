package io.kvpager.impl.broker;

import io.kvpager.internal.books.SealedBooks;
import io.kvpager.internal.membership.ClusterMembership;
import io.kvpager.internal.books.SealedBooks;
import io.kvpager.internal.membership.ClusterMembership;
import io.kvpager.protocol.Owner;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.shareddata.AsyncMap;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Set;
import java.util.function.Predicate;

/**
 * The memory budget of one physical GPU, kept in the cluster's shared data so that every cache
 * on that GPU draws on the same one, in whatever process it runs: each pool's share under the
 * owner that took it ({@link GpuShares}), and the GPU's capacity. The shares move only together,
 * by compare-and-set of the GPU's whole record against the value it replaces, and a refusal is
 * judged on a value just read, so the shares never add up to more than the capacity and two pools
 * never count the same free bytes. A share belongs to its owner: another owner of the same pool
 * replaces it ({@link #claim}), and the shares of owners whose node left the cluster are removed
 * ({@link #removeDeparted}, run by {@link DepartedShares} on every node that survives).
 *
 * <p>Shared data: async map {@value #SHARES} from GPU name to the text of its {@link GpuShares},
 * and {@value #CAPACITIES} from GPU name to capacity in bytes, where the first cache to open a
 * GPU's broker writes it and every later one reads it, so that all of them judge against the same
 * capacity. (An async map's {@code replaceIfPresent} is the compare-and-set; on Hazelcast it costs a
 * quarter of a shared counter's, whose every update ships a serialized function to the key's
 * owner.) In a Vert.x that is not clustered the maps are local to the process, which is all that
 * caches sharing a simulated GPU in one process need.
 *
 * <p>The record also carries each pool's guarantee, its cap and its wait for reclaimed memory; what
 * they allow is decided by {@link ShareArbiter} on the value just read, in the same compare-and-set.
 *
 * <p>Use one broker from one context.
 */
public final class GpuBroker {

    /** The async map of GPU name to capacity in bytes. */
    public static final String CAPACITIES = "kvpager.gpu-capacities";
    /** The async map of GPU name to its pools' shares, as {@link GpuShares} text. */
    public static final String SHARES = "kvpager.gpu-shares";

    private static final Logger log = LoggerFactory.getLogger(GpuBroker.class);
    /** Compare-and-set rounds lost to other caches before an update gives up; each is one another cache won. */
    private static final int MAX_ROUNDS = 64;

    private final String gpu;
    private final long capacityBytes;
    private final AsyncMap<String, String> shares;
    private String lastText;
    private GpuShares lastSeen = GpuShares.NONE;

    private GpuBroker(String gpu, long capacityBytes, AsyncMap<String, String> shares) {
        this.gpu = gpu;
        this.capacityBytes = capacityBytes;
        this.shares = shares;
    }

    /**
     * Opens the broker of {@code gpu}, registering {@code capacityBytes} as its capacity unless
     * another cache has registered one already (that one then holds, and a different value is
     * logged). In a cluster it first removes the shares of owners whose node is no longer a member,
     * and has this node remove those of every node that leaves from now on.
     *
     * @throws IllegalArgumentException (as a failed future) for a blank name or a capacity below 1
     */
    public static Future<GpuBroker> open(Vertx vertx, String gpu, long capacityBytes) {
        if (gpu == null || gpu.isBlank() || capacityBytes < 1) {
            return Future.failedFuture(new IllegalArgumentException("a GPU broker needs a GPU name and a capacity of at least 1 byte, got "
                    + gpu + " and " + capacityBytes));
        }
        ClusterMembership membership = ClusterMembership.of(vertx);
        if (membership != null) {
            DepartedShares.watch(vertx, membership);
        }
        return SealedBooks.keptLongs(vertx, CAPACITIES)
                .compose(capacities -> capacities.putIfAbsent(gpu, capacityBytes))
                .compose(registered -> {
                    long capacity = registered == null ? capacityBytes : registered;
                    if (capacity != capacityBytes) {
                        log.warn("gpu {}: its broker's capacity is {} bytes, as first registered; this cache's worker reports {}",
                                gpu, capacity, capacityBytes);
                    }
                    return SealedBooks.keptText(vertx, SHARES)
                            .map(map -> new GpuBroker(gpu, capacity, map));
                })
                .compose(broker -> {
                    if (membership == null) {
                        return broker.read().map(broker);
                    }
                    Set<String> members = membership.nodes();
                    return broker.removeDeparted(owner -> !members.contains(owner.nodeId())).map(broker);
                });
    }

    /** A broker of {@code gpu}'s record alone, for removals: its capacity is unknown, so it grants nothing. */
    static GpuBroker ofRecord(String gpu, AsyncMap<String, String> shares) {
        return new GpuBroker(gpu, 0, shares);
    }

    public String gpu() {
        return gpu;
    }

    public long capacityBytes() {
        return capacityBytes;
    }

    /**
     * Sets {@code pool}'s share to its owner's {@code bytes}, replacing the share of any other owner
     * of that pool (whose memory the new owner has reclaimed): {@code true} when set, {@code false}
     * when the other pools leave less than that free.
     */
    public Future<Boolean> claim(String pool, Owner owner, long bytes) {
        return claim(pool, owner, bytes, Guarantee.SPLIT);
    }

    /**
     * As {@link #claim(String, Owner, long)}, recording the guarantee the pool asks
     * ({@link ShareArbiter}). Fails with an {@link IllegalArgumentException}, changing nothing, when
     * the guarantees asked on this GPU would add up to more than its capacity.
     */
    public Future<Boolean> claim(String pool, Owner owner, long bytes, Guarantee guarantee) {
        if (bytes < 0) {
            return badBytes(bytes);
        }
        return update(now -> {
            String refused = ShareArbiter.refusesAsk(now, capacityBytes, pool, guarantee);
            if (refused != null) {
                throw new IllegalArgumentException("gpu " + gpu + ": " + refused);
            }
            if (bytes > capacityBytes - now.others(pool)) {
                return Step.done(false);
            }
            GpuShares.Share before = now.of(pool);
            if (before != null && !before.owner().equals(owner)) {
                log.info("gpu {}: pool {} passes from owner {} to owner {}: its share of {} bytes is replaced by {}",
                        gpu, pool, before.owner(), owner, before.bytes(), bytes);
            }
            return Step.write(now.with(pool, new GpuShares.Share(owner, bytes, guarantee, false)), true);
        });
    }

    /**
     * Sets {@code owner}'s share of {@code pool} to between {@code least} and {@code most} bytes:
     * {@code most} where that leaves at least as much free as it takes above {@code least}, less
     * otherwise, so a lease never takes more than half of what it would leave free. Completes with
     * the share's new size, or -1 when the other pools leave less than {@code least} free (judged
     * on a value just read). A share lost to the pool's new owner fails it with a
     * {@link ShareTakenOver}.
     */
    public Future<Long> lease(String pool, Owner owner, long least, long most) {
        return lease(pool, owner, least, most, false);
    }

    /**
     * As {@link #lease(String, Owner, long, long)}; growth beyond the pool's guarantee is refused
     * while it is capped, or {@code restrained} (giving memory back): see {@link ShareArbiter#most}.
     */
    public Future<Long> lease(String pool, Owner owner, long least, long most, boolean restrained) {
        if (least < 0) {
            return badBytes(least);
        }
        if (most < least) {
            return Future.failedFuture(new IllegalArgumentException("a lease's most, " + most + ", is below its least, " + least));
        }
        return update(now -> {
            GpuShares.Share own = now.of(pool);
            if (own != null && !own.owner().equals(owner)) {
                throw new ShareTakenOver(gpu, pool, owner, own.owner());
            }
            long nowMs = System.currentTimeMillis();
            long free = ShareArbiter.most(now, capacityBytes, pool, restrained, nowMs);
            if (least > free) {
                return Step.done(-1L);
            }
            long bytes = least + Math.min(most - least, (free - least) / 2);
            if (own == null && least > 0) {
                log.warn("gpu {}: the share of pool {} (owner {}) was gone; taking {} bytes afresh", gpu, pool, owner, bytes);
            }
            if (own != null && own.bytes() == bytes) {
                return Step.done(bytes);
            }
            GpuShares next = ShareArbiter.settle(now.with(pool, owner, bytes), capacityBytes, pool);
            if (own != null && bytes > own.bytes() && own.waitingUntilMs() != 0) {
                // grown: the wait is over
                next = ShareArbiter.waiting(next, pool, 0);
            }
            if (own != null && own.capped() && !next.of(pool).capped()) {
                log.info("gpu {}: pool {} is within its guarantee again; its cap is lifted", gpu, pool);
            }
            return Step.write(next, bytes);
        });
    }

    /** Removes {@code owner}'s share of {@code pool}; completes with its bytes, 0 when it held none there. */
    public Future<Long> release(String pool, Owner owner) {
        return update(now -> {
            GpuShares.Share own = now.of(pool);
            if (own == null || !own.owner().equals(owner)) {
                return Step.done(0L);
            }
            return Step.write(now.without(pool), own.bytes());
        });
    }

    /** Removes the share of every owner that {@code departed} names; completes with the shares removed. */
    public Future<GpuShares> removeDeparted(Predicate<Owner> departed) {
        return update(now -> {
            Map<String, GpuShares.Share> gone = new LinkedHashMap<>();
            now.shares().forEach((pool, share) -> {
                if (departed.test(share.owner())) {
                    gone.put(pool, share);
                }
            });
            if (gone.isEmpty()) {
                return Step.done(GpuShares.NONE);
            }
            GpuShares removed = new GpuShares(gone);
            return Step.write(now.without(removed), removed);
        }).onSuccess(removed -> {
            if (!removed.shares().isEmpty()) {
                log.info("gpu {}: removed the shares of departed owners, {} bytes: {}", gpu, removed.total(), removed.shares());
            }
        });
    }

    /**
     * Caps {@code pool} at its guarantee ({@link ShareArbiter}) unless {@code gaveBack} finds that it
     * has given back since, judged on shares just read: completes with whether it is capped now.
     */
    Future<Boolean> capUnless(String pool, java.util.function.Predicate<GpuShares> gaveBack) {
        return update(now -> {
            GpuShares.Share own = now.of(pool);
            if (own == null || own.capped() || gaveBack.test(now)) {
                return Step.done(own != null && own.capped());
            }
            return Step.write(ShareArbiter.cap(now, pool), true);
        });
    }

    /**
     * Marks {@code pool} (of {@code owner}) as waiting for reclaimed memory until {@code untilMs}, wall
     * clock, or no longer ({@code 0}): meanwhile no other pool grows beyond its guarantee.
     */
    Future<Void> waiting(String pool, Owner owner, long untilMs) {
        return update(now -> {
            GpuShares.Share own = now.of(pool);
            if (own == null || !own.owner().equals(owner) || own.waitingUntilMs() == untilMs) {
                return Step.done((Void) null);
            }
            return Step.write(ShareArbiter.waiting(now, pool, untilMs), (Void) null);
        });
    }

    /** Every pool's share of this GPU now. */
    public Future<GpuShares> shares() {
        return read();
    }

    /** The bytes every cache on this GPU has taken now. */
    public Future<Long> taken() {
        return read().map(GpuShares::total);
    }

    /** The shares as last read or written by this broker: what a refusal was judged on. */
    public GpuShares lastSeen() {
        return lastSeen;
    }

    private static <T> Future<T> badBytes(long bytes) {
        return Future.failedFuture(new IllegalArgumentException("a GPU share cannot be " + bytes + " bytes"));
    }

    /**
     * One decision on the shares seen: write these next and complete with this, or write nothing.
     * Writing nothing (a refusal among them) is only final on shares just read.
     */
    private record Step<T>(GpuShares next, T result) {
        static <T> Step<T> write(GpuShares next, T result) {
            return new Step<>(next, result);
        }

        static <T> Step<T> done(T result) {
            return new Step<>(null, result);
        }
    }

    private interface Decision<T> {
        Step<T> decide(GpuShares now);
    }

    private <T> Future<T> update(Decision<T> decision) {
        return round(decision, lastText, lastSeen, false, 0);
    }

    private <T> Future<T> round(Decision<T> decision, String text, GpuShares now, boolean fresh, int round) {
        Step<T> step;
        try {
            step = decision.decide(now);
        } catch (RuntimeException e) {
            return fresh ? Future.failedFuture(e) : afresh(decision, round);
        }
        if (step.next() == null) {
            return fresh ? Future.succeededFuture(step.result()) : afresh(decision, round);
        }
        String next = step.next().encode();
        Future<Boolean> written = text == null
                ? shares.putIfAbsent(gpu, next).map(before -> before == null)
                : shares.replaceIfPresent(gpu, text, next);
        return written.compose(done -> {
            if (done) {
                remember(next, step.next());
                return Future.succeededFuture(step.result());
            }
            if (round >= MAX_ROUNDS) {
                return Future.failedFuture(new IllegalStateException("gpu " + gpu + ": gave up updating its shares after "
                        + MAX_ROUNDS + " rounds lost to other caches"));
            }
            return afresh(decision, round + 1);
        });
    }

    /** Decides again on the shares read now. */
    private <T> Future<T> afresh(Decision<T> decision, int round) {
        return readText().compose(read -> round(decision, read, GpuShares.parse(read), true, round));
    }

    private Future<GpuShares> read() {
        return readText().map(text -> lastSeen);
    }

    private Future<String> readText() {
        return shares.get(gpu).map(text -> {
            remember(text, GpuShares.parse(text));
            return text;
        });
    }

    private void remember(String text, GpuShares seen) {
        lastText = text;
        lastSeen = seen;
    }

    @Override
    public String toString() {
        return "GpuBroker[" + gpu + ", capacity " + capacityBytes + ", last seen taken " + lastSeen.total() + "]";
    }

    /** A pool's share that another owner of that pool has claimed since. */
    public static final class ShareTakenOver extends IllegalStateException {
        ShareTakenOver(String gpu, String pool, Owner owner, Owner now) {
            super("gpu " + gpu + ": the share of pool " + pool + " belongs to owner " + now + " now, not to " + owner);
        }
    }
}
