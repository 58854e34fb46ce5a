package io.kvpager.sim;

import io.kvpager.spi.DeviceException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;

/**
 * The faults one {@link SimDevice} injects into its driver calls. Tests change it while the
 * device runs ({@link #add}, {@link #clear}), read how often each fault fired, and let hanging
 * calls go ({@link #releaseHangs()}); closing the device lets them go too, so no test leaves a
 * thread stuck. Thread-safe.
 *
 * <p>Every fault sees every call: each counts the calls it matches. When several fire on one
 * call, their delays add up, the call hangs if any of them hangs, and it fails with the error of
 * the first in plan order that has one.
 */
public final class FaultPlan {

    private static final Logger LOG = LoggerFactory.getLogger(FaultPlan.class);

    private final List<Armed> armed = new ArrayList<>();
    private long hangRelease;
    private long delayRelease;
    private int hanging;
    private int delaying;

    /** An empty plan. */
    public FaultPlan() {
    }

    /**
     * Reads the {@code faults} option: a list of entries as {@link Fault#parse} takes them;
     * {@code null} gives an empty plan. Any {@link Iterable} of entries is read, and an entry may
     * be a {@link Map} or an {@link Iterable} of map entries, so Vert.x {@code JsonArray} and
     * {@code JsonObject} values work without converting them.
     *
     * @throws IllegalArgumentException naming the first bad entry and field
     */
    public static FaultPlan parse(Object faults) {
        FaultPlan plan = new FaultPlan();
        if (faults == null) {
            return plan;
        }
        if (!(faults instanceof Iterable<?> entries)) {
            throw new IllegalArgumentException("faults must be a list of fault entries, got " + Fault.describe(faults));
        }
        List<Fault> parsed = new ArrayList<>();
        int i = 0;
        for (Object value : entries) {
            parsed.add(Fault.parse(entry(value, i), i));
            i++;
        }
        parsed.forEach(plan::add);
        return plan;
    }

    /** Arms {@code fault} and returns its index for {@link #fired(int)}; indexes restart after {@link #clear()}. */
    public synchronized int add(Fault fault) {
        if (fault == null) {
            throw new IllegalArgumentException("fault is null");
        }
        armed.add(new Armed(fault));
        return armed.size() - 1;
    }

    /** Parses one config entry and arms it; messages name it by the index it would get. */
    public synchronized int add(Map<String, ?> entry) {
        return add(Fault.parse(entry, armed.size()));
    }

    /** Disarms every fault and forgets their counts. Calls hanging already keep hanging until released. */
    public synchronized void clear() {
        armed.clear();
    }

    /** The armed faults, in plan order. */
    public synchronized List<Fault> faults() {
        return armed.stream().map(a -> a.fault).toList();
    }

    public synchronized boolean isEmpty() {
        return armed.isEmpty();
    }

    /** How many calls fault {@code index} fired on. */
    public synchronized long fired(int index) {
        return at(index).fired;
    }

    /** How many calls fault {@code index} matched, fired on or not. */
    public synchronized long matched(int index) {
        return at(index).matched;
    }

    /** How many times any fault fired. */
    public synchronized long firedTotal() {
        return armed.stream().mapToLong(a -> a.fired).sum();
    }

    /** How many calls are hanging now; tests wait on this to know a hang has begun. */
    public synchronized int hanging() {
        return hanging;
    }

    /** How many calls are waiting out a delay now. */
    public synchronized int delaying() {
        return delaying;
    }

    /** Lets every call hanging now go; each fails with its fault's error or {@code CUDA_ERROR_UNKNOWN}. */
    public synchronized void releaseHangs() {
        hangRelease++;
        notifyAll();
    }

    /**
     * Ends every delay being waited out now: those calls proceed at once, as if their delay had
     * passed. A test that needs an answer to come late, and only after something else happened,
     * gives the delay more time than it could take and ends it here.
     */
    public synchronized void releaseDelays() {
        delayRelease++;
        notifyAll();
    }

    /** Wakes waiting calls so that they see their device closed. */
    synchronized void wake() {
        notifyAll();
    }

    /**
     * Runs the faults that fire on this call: waits their delays, hangs, and throws the
     * {@link DeviceException} they ask for. Returns normally when the call should proceed.
     *
     * @param page the call's page id, or {@link Fault#ANY_PAGE} when it has none
     * @param closed whether the device has closed, which ends delays and hangs early
     */
    void apply(DriverCall call, String rank, long page, BooleanSupplier closed) {
        long delayMs = 0;
        boolean hang = false;
        String error = null;
        synchronized (this) {
            if (armed.isEmpty()) {
                return;
            }
            for (Armed a : armed) {
                if (!a.fault.matches(call, rank, page)) {
                    continue;
                }
                a.matched++;
                if (a.matched >= a.fault.nth() && a.matched - a.fault.nth() < a.fault.times()) {
                    a.fired++;
                    delayMs += a.fault.delayMs();
                    hang |= a.fault.hang();
                    if (error == null) {
                        error = a.fault.error();
                    }
                }
            }
        }
        if (delayMs > 0 || hang) {
            // a line a test in another process can wait for: the call is in the middle of its work now
            LOG.info("fault plan: {} of {}{} {}", call.shortName(), rank, page == Fault.ANY_PAGE ? "" : " page " + page,
                    hang ? "hangs until released" : "waits " + delayMs + " ms");
        }
        if (delayMs > 0) {
            delay(delayMs, closed);
        }
        if (hang) {
            String how = hangUntilReleased(closed);
            String name = error != null ? error : DeviceException.UNKNOWN;
            throw new DeviceException(call.driverName(), name, CuResult.valueOf(name), "hung by the fault plan until " + how);
        }
        if (error != null) {
            throw new DeviceException(call.driverName(), error, CuResult.valueOf(error), "injected by the fault plan");
        }
    }

    private synchronized void delay(long ms, BooleanSupplier closed) {
        long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(ms);
        long left;
        long release = delayRelease;
        delaying++;
        try {
            while (!closed.getAsBoolean() && delayRelease == release && (left = deadline - System.nanoTime()) > 0) {
                TimeUnit.NANOSECONDS.timedWait(this, left);
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } finally {
            delaying--;
        }
    }

    private synchronized String hangUntilReleased(BooleanSupplier closed) {
        long release = hangRelease;
        hanging++;
        try {
            while (true) {
                if (closed.getAsBoolean()) {
                    return "the device closed";
                }
                if (hangRelease != release) {
                    return "released";
                }
                try {
                    wait();
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    return "the thread was interrupted";
                }
            }
        } finally {
            hanging--;
        }
    }

    private Armed at(int index) {
        if (index < 0 || index >= armed.size()) {
            throw new IllegalArgumentException("no fault " + index + "; the plan has " + armed.size());
        }
        return armed.get(index);
    }

    private static Map<String, ?> entry(Object value, int index) {
        Map<String, Object> fields = new LinkedHashMap<>();
        if (value instanceof Map<?, ?> map) {
            map.forEach((key, field) -> fields.put(key(key, index), field));
        } else if (value instanceof Iterable<?> pairs) {
            for (Object pair : pairs) {
                if (!(pair instanceof Map.Entry<?, ?> e)) {
                    throw notAnEntry(value, index);
                }
                fields.put(key(e.getKey(), index), e.getValue());
            }
        } else {
            throw notAnEntry(value, index);
        }
        return fields;
    }

    private static String key(Object key, int index) {
        if (!(key instanceof String name)) {
            throw new IllegalArgumentException("faults[" + index + "]: keys must be strings, got " + Fault.describe(key));
        }
        return name;
    }

    private static IllegalArgumentException notAnEntry(Object value, int index) {
        return new IllegalArgumentException("faults[" + index + "]: must be an object with keys " + Fault.KEYS
                + ", got " + Fault.describe(value));
    }

    @Override
    public synchronized String toString() {
        return "FaultPlan" + armed.stream().map(a -> a.fault.toMap() + " fired " + a.fired).toList();
    }

    /** A fault with its counts. */
    private static final class Armed {
        final Fault fault;
        long matched;
        long fired;

        Armed(Fault fault) {
            this.fault = fault;
        }
    }
}
