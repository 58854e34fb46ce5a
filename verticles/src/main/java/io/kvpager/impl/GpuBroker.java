package io.kvpager.impl;

import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.shareddata.AsyncMap;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The memory budget of one physical GPU, kept in the cluster's shared data so that every cache
 * on that GPU draws on the same one, in whatever process it runs: the bytes taken, and the GPU's
 * capacity. A cache takes budget before it maps pages and gives it back once they are unmapped; a
 * take that would pass the capacity is refused. The bytes taken only move by compare-and-set
 * against the value they replace, and a refusal is judged on a value just read, so two caches can
 * never both count the same free bytes.
 *
 * <p>Shared data: async map {@value #TAKEN} from GPU name to bytes taken, and {@value #CAPACITIES}
 * from GPU name to capacity in bytes, where the first cache to open a GPU's broker writes it and
 * every later one reads it, so that all of them judge against the same capacity. (An async map's
 * {@code replaceIfPresent} is the compare-and-set; on Hazelcast it costs a quarter of a shared
 * counter's, whose every update ships a serialized function to the key's owner.) In a Vert.x that
 * is not clustered the maps are local to the process, which is all that caches sharing a
 * simulated GPU in one process need.
 *
 * <p>Use one broker from one context.
 */
public final class GpuBroker {

    /** The async map of GPU name to capacity in bytes. */
    public static final String CAPACITIES = "kvpager.gpu-capacities";
    /** The async map of GPU name to the bytes all caches have taken there. */
    public static final String TAKEN = "kvpager.gpu-taken";

    private static final Logger log = LoggerFactory.getLogger(GpuBroker.class);
    /** Compare-and-set rounds lost to other caches before a take or give gives up; each is one another cache won. */
    private static final int MAX_ROUNDS = 64;

    private final String gpu;
    private final long capacityBytes;
    private final AsyncMap<String, Long> taken;
    private long lastSeen;

    private GpuBroker(String gpu, long capacityBytes, AsyncMap<String, Long> taken) {
        this.gpu = gpu;
        this.capacityBytes = capacityBytes;
        this.taken = taken;
    }

    /**
     * Opens the broker of {@code gpu}, registering {@code capacityBytes} as its capacity unless
     * another cache has registered one already (that one then holds, and a different value is logged).
     *
     * @throws IllegalArgumentException (as a failed future) for a blank name or a capacity below 1
     */
    public static Future<GpuBroker> open(Vertx vertx, String gpu, long capacityBytes) {
        if (gpu == null || gpu.isBlank() || capacityBytes < 1) {
            return Future.failedFuture(new IllegalArgumentException("a GPU broker needs a GPU name and a capacity of at least 1 byte, got "
                    + gpu + " and " + capacityBytes));
        }
        return vertx.sharedData().<String, Long>getAsyncMap(CAPACITIES)
                .compose(capacities -> capacities.putIfAbsent(gpu, capacityBytes))
                .compose(registered -> {
                    long capacity = registered == null ? capacityBytes : registered;
                    if (capacity != capacityBytes) {
                        log.warn("gpu {}: its broker's capacity is {} bytes, as first registered; this cache's worker reports {}",
                                gpu, capacity, capacityBytes);
                    }
                    return vertx.sharedData().<String, Long>getAsyncMap(TAKEN)
                            .compose(taken -> taken.putIfAbsent(gpu, 0L).map(before -> {
                                GpuBroker broker = new GpuBroker(gpu, capacity, taken);
                                broker.lastSeen = before == null ? 0 : before;
                                return broker;
                            }));
                });
    }

    public String gpu() {
        return gpu;
    }

    public long capacityBytes() {
        return capacityBytes;
    }

    /**
     * Takes {@code bytes} of the GPU's budget: {@code true} when taken, {@code false} when the
     * other takers leave less than that free. A refusal is judged on a value just read, never on
     * a remembered one.
     *
     * @throws IllegalArgumentException (as a failed future) for {@code bytes <= 0}
     */
    public Future<Boolean> take(long bytes) {
        if (bytes <= 0) {
            return Future.failedFuture(new IllegalArgumentException("a take needs a positive number of bytes, got " + bytes));
        }
        return take(bytes, lastSeen, false, 0);
    }

    private Future<Boolean> take(long bytes, long expected, boolean fresh, int round) {
        if (bytes > capacityBytes - expected) {
            return fresh ? Future.succeededFuture(false) : read().compose(now -> take(bytes, now, true, round));
        }
        return taken.replaceIfPresent(gpu, expected, expected + bytes).compose(done -> {
            if (done) {
                lastSeen = expected + bytes;
                return Future.succeededFuture(true);
            }
            if (round >= MAX_ROUNDS) {
                return Future.failedFuture(new IllegalStateException("gpu " + gpu + ": gave up taking " + bytes
                        + " bytes after " + MAX_ROUNDS + " rounds lost to other caches"));
            }
            return read().compose(now -> take(bytes, now, true, round + 1));
        });
    }

    /** Gives {@code bytes} back. */
    public Future<Void> give(long bytes) {
        if (bytes <= 0) {
            return bytes == 0 ? Future.succeededFuture()
                    : Future.failedFuture(new IllegalArgumentException("cannot give back " + bytes + " bytes"));
        }
        return give(bytes, lastSeen, 0);
    }

    private Future<Void> give(long bytes, long expected, int round) {
        return taken.replaceIfPresent(gpu, expected, expected - bytes).compose(done -> {
            if (done) {
                lastSeen = expected - bytes;
                if (lastSeen < 0) {
                    log.error("gpu {}: its broker counts {} bytes taken after a give of {}: more was given back than taken",
                            gpu, lastSeen, bytes);
                }
                return Future.<Void>succeededFuture();
            }
            if (round >= MAX_ROUNDS) {
                return Future.failedFuture(new IllegalStateException("gpu " + gpu + ": gave up giving back " + bytes
                        + " bytes after " + MAX_ROUNDS + " rounds lost to other caches"));
            }
            return read().compose(now -> give(bytes, now, round + 1));
        });
    }

    /** The bytes every cache on this GPU has taken now. */
    public Future<Long> taken() {
        return read();
    }

    /** The bytes taken as last read or written by this broker: what a refusal was judged on. */
    public long lastSeen() {
        return lastSeen;
    }

    private Future<Long> read() {
        return taken.get(gpu).map(now -> {
            lastSeen = now == null ? 0 : now;
            return lastSeen;
        });
    }

    @Override
    public String toString() {
        return "GpuBroker[" + gpu + ", capacity " + capacityBytes + ", last seen taken " + lastSeen + "]";
    }
}
